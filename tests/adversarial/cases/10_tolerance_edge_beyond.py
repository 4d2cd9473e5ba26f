# tries: be off by three times the fp32 absolute tolerance (lower-precision shortcut)
# expect: numerical_mismatch
# preamble: relu_ext

class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x) + 3e-3
