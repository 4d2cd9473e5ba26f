# tries: abort() from native code
# expect: runtime_error
# preamble: relu_ext
# message: SIGABRT

class ModelNew(nn.Module):
    def forward(self, x):
        return ext.abort_now(x)
