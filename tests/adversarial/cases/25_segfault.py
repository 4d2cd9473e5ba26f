# tries: dereference a null pointer in native code
# expect: runtime_error
# preamble: relu_ext
# message: SIGSEGV

class ModelNew(nn.Module):
    def forward(self, x):
        return ext.segfault(x)
