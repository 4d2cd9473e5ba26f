import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_add_clamp_kernel(x_ptr, r_ptr, y_ptr, n, scale, lo, hi, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    r = tl.load(r_ptr + offs, mask=mask)
    y = tl.minimum(tl.maximum(x * scale + r, lo), hi)
    tl.store(y_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, scale: float, clamp_min: float, clamp_max: float):
        super().__init__()
        self.scale = scale
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x, residual = x.contiguous(), residual.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        BLOCK = 4096
        scale_add_clamp_kernel[(triton.cdiv(n, BLOCK),)](x, residual, y, n, self.scale, self.clamp_min,
                                                         self.clamp_max, BLOCK=BLOCK)
        return y
