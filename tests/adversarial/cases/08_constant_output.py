# tries: return the same constant whatever the input
# expect: numerical_mismatch
# preamble: relu_ext
# message: did not change with the input

class ModelNew(nn.Module):
    def forward(self, x):
        return torch.full_like(x, 0.5)
