# tries: never return (Python loop)
# expect: timeout
# preamble: relu_ext
# settings: run_timeout_s=5

class ModelNew(nn.Module):
    def forward(self, x):
        while True:
            pass
