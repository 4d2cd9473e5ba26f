# tries: allocate and touch 100 GB
# expect: runtime_error
# preamble: relu_ext
# settings: memory_limit_mb=2048
# message: allocat

class ModelNew(nn.Module):
    def forward(self, x):
        return torch.empty(25_000_000_000, dtype=torch.float32).fill_(1.0)[: x.numel()].view_as(x)
