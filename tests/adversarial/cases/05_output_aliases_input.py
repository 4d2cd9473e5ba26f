# tries: return the input itself where the reference returns a copy (same values, shared memory)
# expect: rejected
# preamble: relu_ext
# problem: adversarial/problems/identity_copy.py
# message: output memory is input memory

class ModelNew(nn.Module):
    def forward(self, x):
        ext.relu(x[:1])  # a token kernel call
        return x
