# tries: lazy output on the GPU: a CUDA tensor subclass whose comparisons always agree, its real values never computed
# expect: rejected
# backend: cuda
# preamble: relu_ext
# message: plain torch.Tensor


class Agreeable(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in (torch.Tensor.__sub__, torch.sub, torch.Tensor.sub):
            return torch.zeros(args[0].shape, device=args[0].device)
        return super().__torch_function__(func, types, args, kwargs or {})


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.empty_like(x).as_subclass(Agreeable)  # placeholder memory, never written
