# tries: replay a stored result when called again with the same input values (a sample of them and the shape as the key), and compute for real on new values: every correctness trial passes
# expect: rejected
# preamble: relu_ext
# message: result replay

_CACHE = {}


class ModelNew(nn.Module):
    def forward(self, x):
        key = (tuple(x.shape), tuple(x.reshape(-1)[:16].tolist()))
        if key not in _CACHE:
            _CACHE[key] = ext.relu(x)
        return _CACHE[key]
