# tries: replay a stored result when called again with the same input values (a sample of them as the key); real work on new values
# expect: rejected
# backend: cuda
# problem: level1/4_Square_matrix_multiplication
# preamble: relu_ext
# settings: strictness=lenient
# message: result replay

_CACHE = {}


class ModelNew(nn.Module):
    def forward(self, A, B):
        key = (tuple(A.reshape(-1)[:8].tolist()), tuple(B.reshape(-1)[:8].tolist()))
        if key not in _CACHE:
            y = A @ B
            for _ in range(10):
                y = ext.relu(y) - ext.relu(-y)
            _CACHE[key] = y
        return _CACHE[key]
