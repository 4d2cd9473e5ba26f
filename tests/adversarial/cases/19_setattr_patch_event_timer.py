# tries: patch the CUDA event timer through setattr (dodging a plain assignment check)
# expect: static_rejected
# preamble: relu_ext
# message: setattr

setattr(torch.cuda.Event, "elapsed_time", lambda self, other: 1e-6)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
