# tries: replay keyed on the tensor's address and version counter (new values written in place bump the version, so the cheat computes again and returns correct values)
# expect: rejected | numerical_mismatch
# preamble: relu_ext
# message: result replay

_CACHE = {}


class ModelNew(nn.Module):
    def forward(self, x):
        key = (x.data_ptr(), x._version, tuple(x.shape))
        if key not in _CACHE:
            _CACHE.clear()
            _CACHE[key] = ext.relu(x)
        return _CACHE[key]
