# tries: never return (native loop that ignores Python signals)
# expect: timeout
# preamble: relu_ext
# settings: run_timeout_s=5

class ModelNew(nn.Module):
    def forward(self, x):
        return ext.spin(x)
