# tries: return an uninitialised buffer, hoping it still holds a previous result's bytes
# expect: numerical_mismatch
# preamble: relu_ext

class ModelNew(nn.Module):
    def forward(self, x):
        return torch.empty_like(x)
