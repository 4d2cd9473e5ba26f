# tries: batch and skip: every other call on unchanged inputs (same address and version) returns the previous result, while any call on changed inputs does the real work: half the timed reps cost nothing, so the median halves, and every call on new inputs computes and matches
# expect: rejected
# preamble: relu_ext
# message: result replay


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls, self.key, self.out = 0, None, None

    def forward(self, x):
        key = (x.data_ptr(), x._version)
        self.calls += 1
        if key == self.key and self.calls % 2 == 0:
            return self.out
        y = x
        for _ in range(10):  # relu is idempotent: enough work that the skipped calls matter
            y = ext.relu(y)
        self.key, self.out = key, y
        return y
