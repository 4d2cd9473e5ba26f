import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
__global__ void add_kernel(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}
torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b) {
    auto out = torch::zeros_like(a);
    int n = a.numel();
    add_kernel<<<(n + 255) / 256, 256>>>(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

ext = load_inline(name="kforge_honest_add", cpp_sources="torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b);",
                  cuda_sources=_SRC, functions=["add_cuda"])


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.add_cuda(a.contiguous(), b.contiguous())
