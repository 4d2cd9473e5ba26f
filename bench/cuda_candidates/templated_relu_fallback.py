"""A candidate the split build must hand back to load_inline: a templated kernel dispatched over dtypes
(AT_DISPATCH), so its instantiations are chosen in host code (bench/build_paths.py: the fallback path)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>

template <typename scalar_t>
__global__ void relu_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ y, int64_t n) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > scalar_t(0) ? x[i] : scalar_t(0);
}

torch::Tensor relu(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t n = xc.numel();
    AT_DISPATCH_FLOATING_TYPES(xc.scalar_type(), "relu", [&] {
        relu_kernel<scalar_t><<<(unsigned)((n + 255) / 256), 256>>>(xc.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n);
    });
    return y;
}
"""

ext = load_inline(name="templated_relu", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=cuda_src,
                  functions=["relu"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu(x)
