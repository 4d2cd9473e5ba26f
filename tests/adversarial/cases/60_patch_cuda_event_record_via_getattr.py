# tries: reach torch.cuda.Event through getattr (no `torch.` assignment, no setattr) and make record() a no-op
# expect: rejected
# preamble: relu_ext
# message: torch.cuda.Event.record

_E = getattr(torch.cuda, "Event")
_E.record = lambda self, *a, **k: None


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
