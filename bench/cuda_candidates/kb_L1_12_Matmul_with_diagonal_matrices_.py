"""KernelBench level1/12: diag(A) @ B is a row scaling of B, one pass over B (bench/build_paths.py)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void row_scale_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                 int64_t rows, int64_t cols) {
    const int64_t r = blockIdx.y;
    const float s = a[r];
    for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < cols; j += (int64_t)gridDim.x * blockDim.x)
        c[r * cols + j] = s * b[r * cols + j];
}

torch::Tensor diag_matmul(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.dim() == 1 && b.dim() == 2 && a.size(0) == b.size(0), "shapes");
    auto ac = a.contiguous();
    auto bc = b.contiguous();
    auto c = torch::empty_like(bc);
    const int64_t rows = bc.size(0), cols = bc.size(1);
    dim3 grid((unsigned)std::min<int64_t>((cols + 255) / 256, 16), (unsigned)rows);
    row_scale_kernel<<<grid, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        ac.data_ptr<float>(), bc.data_ptr<float>(), c.data_ptr<float>(), rows, cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return c;
}
"""

ext = load_inline(name="kb12_diag_matmul", cpp_sources="torch::Tensor diag_matmul(torch::Tensor a, torch::Tensor b);",
                  cuda_sources=cuda_src, functions=["diag_matmul"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return ext.diag_matmul(A, B)
