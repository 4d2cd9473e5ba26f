# tries: compute in place in the input buffer and return it (saves an allocation, corrupts the caller's data)
# expect: rejected
# preamble: relu_ext
# message: modified its inputs in place

class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_inplace(x)
