# tries: cache results keyed by the input's address and shape (survives timing, where inputs are reused)
# expect: numerical_mismatch | rejected
# preamble: relu_ext

_CACHE = {}


class ModelNew(nn.Module):
    def forward(self, x):
        key = (x.data_ptr(), tuple(x.shape))
        if key not in _CACHE:
            _CACHE[key] = ext.relu(x)
        return _CACHE[key]
