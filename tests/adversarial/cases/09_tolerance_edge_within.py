# tries: be off by half the fp32 absolute tolerance everywhere (legitimately within tolerance)
# expect: correct
# preamble: relu_ext

class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x) + 0.5e-3
