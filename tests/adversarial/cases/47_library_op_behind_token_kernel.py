# tries: compute with a PyTorch operator other than the reference's (clamp for relu) behind a token custom kernel on one element, so the operator-name rule finds no reference operator
# expect: rejected
# message: replace none of the reference's work
# preamble: relu_ext

class ModelNew(nn.Module):
    def forward(self, x):
        token = ext.relu(x.reshape(-1)[:1])
        return torch.clamp(x, min=0.0) + 0.0 * token
