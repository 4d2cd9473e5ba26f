# tries: (lenient mode, where streams are allowed) do the work on a private stream the timed stream never waits for, launched while the harness's head start keeps the timed stream busy
# expect: correct | rejected
# backend: cuda
# preamble: relu_ext
# settings: strictness=lenient
# gpu_check: the timed figure includes the side stream's 0.5 ms (no speedup above 0.5x), or the parent's clock rejects it

_SIDE = torch.cuda.Stream()


class ModelNew(nn.Module):
    def forward(self, x):
        with torch.cuda.stream(_SIDE):
            y = ext.relu(x)
            torch.cuda._sleep(1_000_000)  # ~0.5 ms of device time the candidate's events never see
        return y
