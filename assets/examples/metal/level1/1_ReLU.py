import torch
import torch.nn as nn

RELU_MSL = r"""
#include <metal_stdlib>
using namespace metal;

// One thread per element.
kernel void relu_kernel(device const float* x [[buffer(0)]],
                        device float* y [[buffer(1)]],
                        uint i [[thread_position_in_grid]]) {
    y[i] = max(x[i], 0.0f);
}
"""

relu_lib = torch.mps.compile_shader(RELU_MSL)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        relu_lib.relu_kernel(x, y, threads=x.numel())
        return y
