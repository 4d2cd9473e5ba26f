# tries: return a Tensor subclass whose __torch_function__ makes every comparison look perfect
# expect: rejected
# preamble: relu_ext
# message: plain torch.Tensor


class Agreeable(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in (torch.Tensor.__sub__, torch.sub, torch.Tensor.sub):
            return torch.zeros(args[0].shape)
        return super().__torch_function__(func, types, args, kwargs or {})


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x).as_subclass(Agreeable)
