# tries: compute once per model instance, then return that first output forever (fast in timing)
# expect: rejected
# preamble: relu_ext
# settings: timing=True
# message: after timing

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cached = None

    def forward(self, x):
        if self.cached is None:
            self.cached = ext.relu(x)
        return self.cached
