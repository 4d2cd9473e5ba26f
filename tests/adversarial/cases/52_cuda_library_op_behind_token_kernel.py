# tries: compute with a PyTorch operator other than the reference's (clamp for relu) behind a token CUDA kernel on one element
# expect: rejected
# backend: cuda
# preamble: relu_ext
# message: replace none of the reference's work

class ModelNew(nn.Module):
    def forward(self, x):
        token = ext.relu(x.reshape(-1)[:1].contiguous())
        return torch.clamp(x, min=0.0) + 0.0 * token.sum()
