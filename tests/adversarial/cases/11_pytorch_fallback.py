# tries: build a kernel (to pass the static check) but compute with the PyTorch operator
# expect: rejected
# preamble: relu_ext
# message: reference's own PyTorch operators

class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
