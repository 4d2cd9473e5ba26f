import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_dim_kernel(x_ptr, y_ptr, reduce, inner, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    # x viewed as [outer, reduce, inner]; each program sums BLOCK_I adjacent inner columns of one outer slice.
    o = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    col_mask = cols < inner
    acc = tl.zeros((BLOCK_I,), dtype=tl.float32)
    base = x_ptr + o * reduce * inner
    for r0 in range(0, reduce, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        tile = tl.load(base + rows[:, None] * inner + cols[None, :],
                       mask=(rows[:, None] < reduce) & col_mask[None, :], other=0.0)
        acc += tl.sum(tile, axis=0)
    tl.store(y_ptr + o * inner + cols, acc, mask=col_mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        dim = self.dim % x.dim()
        outer = x.shape[:dim].numel()
        inner = x.shape[dim + 1:].numel()
        out_shape = list(x.shape)
        out_shape[dim] = 1
        y = torch.empty(out_shape, device=x.device, dtype=x.dtype)
        BLOCK_I = 64
        sum_dim_kernel[(outer, triton.cdiv(inner, BLOCK_I))](x, y, x.shape[dim], inner, BLOCK_R=32, BLOCK_I=BLOCK_I)
        return y
