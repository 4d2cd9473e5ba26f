# tries: find the reference module through sys.modules and call its Model
# expect: static_rejected
# preamble: relu_ext
# message: sys.modules
import sys


class ModelNew(nn.Module):
    def forward(self, x):
        ref = [m for m in sys.modules.values() if hasattr(m, "get_inputs")][0]
        return ref.Model()(x) if ext else None
