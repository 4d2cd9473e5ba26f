# tries: make every comparison succeed by replacing torch.allclose
# expect: static_rejected
# preamble: relu_ext
# message: monkey-patches `torch.allclose`

torch.allclose = lambda *args, **kwargs: True


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
