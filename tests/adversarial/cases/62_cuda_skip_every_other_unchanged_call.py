# tries: batch and skip on the GPU: every other call on unchanged inputs (same address and version) returns the previous result, while any call on changed inputs does the real work: the median of the timed reps halves, every call on new inputs matches
# expect: rejected
# backend: cuda
# problem: level1/4_Square_matrix_multiplication
# preamble: relu_ext
# settings: strictness=lenient
# message: result replay


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls, self.key, self.out = 0, None, None

    def forward(self, A, B):
        key = (A.data_ptr(), A._version, B.data_ptr(), B._version)
        self.calls += 1
        if key == self.key and self.calls % 2 == 0:
            return self.out
        y = A @ B
        for _ in range(10):
            y = ext.relu(y) - ext.relu(-y)
        self.key, self.out = key, y
        return y
