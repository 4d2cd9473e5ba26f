import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void new_gelu_kernel(const float* x, float* y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = 0.5f * v * (1.f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
    }
}
torch::Tensor new_gelu(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    int64_t n = xc.numel();
    new_gelu_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

ext = load_inline(name="kforge_honest_new_gelu", cpp_sources="torch::Tensor new_gelu(torch::Tensor x);",
                  cuda_sources=_SRC, functions=["new_gelu"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.new_gelu(x)
