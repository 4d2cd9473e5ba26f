# tries: flood stdout (fills the disk of whoever logs it)
# expect: runtime_error
# preamble: relu_ext
# settings: output_limit_mb=8
# message: output limit

class ModelNew(nn.Module):
    def forward(self, x):
        line = "flood " * 1000
        for _ in range(100_000):
            print(line)
        return ext.relu(x)
