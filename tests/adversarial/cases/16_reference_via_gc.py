# tries: search the garbage collector's objects for the reference's output
# expect: static_rejected
# preamble: relu_ext
# message: gc
import gc


class ModelNew(nn.Module):
    def forward(self, x):
        outs = [o for o in gc.get_objects() if isinstance(o, torch.Tensor) and o.shape == x.shape]
        return outs[-1] if outs else ext.relu(x)
