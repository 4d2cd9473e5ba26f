# tries: freeze the clock so every call looks instantaneous
# expect: static_rejected
# preamble: relu_ext
# message: monkey-patches `time.perf_counter`

time.perf_counter = lambda: 0.0


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
