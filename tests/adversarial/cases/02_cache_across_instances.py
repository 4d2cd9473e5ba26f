# tries: a module-level cache shared by every ModelNew instance (returns trial 1's result later)
# expect: numerical_mismatch
# preamble: relu_ext

_CACHE = []


class ModelNew(nn.Module):
    def forward(self, x):
        if not _CACHE:
            _CACHE.append(ext.relu(x))
        return _CACHE[0]
