# tries: make CUDA events report a tenth of the real time, through an alias of torch.cuda.Event (no setattr, no `torch.` assignment)
# expect: rejected
# backend: cuda
# preamble: relu_ext
# message: torch.cuda.Event.elapsed_time

_Ev = torch.cuda.Event
_real_elapsed = _Ev.elapsed_time


def _tenth(self, other):
    return _real_elapsed(self, other) / 10


_Ev.elapsed_time = _tenth


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
