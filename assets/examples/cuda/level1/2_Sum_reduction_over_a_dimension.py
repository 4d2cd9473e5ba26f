import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

sum_cuda_src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

// View x as [outer, reduce, inner]; one thread per (outer, inner) output, walking the reduced axis.
// Consecutive threads take consecutive inner indices, so every load is coalesced.
__global__ void sum_dim_kernel(const float* __restrict__ x, float* __restrict__ y,
                               int64_t outer, int64_t reduce, int64_t inner) {
    const int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (idx >= outer * inner) return;
    const int64_t o = idx / inner, i = idx % inner;
    const float* p = x + o * reduce * inner + i;
    float acc = 0.f;
    #pragma unroll 8
    for (int64_t r = 0; r < reduce; ++r) acc += p[r * inner];
    y[idx] = acc;
}

torch::Tensor sum_dim_cuda(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expects a float32 CUDA tensor");
    auto xc = x.contiguous();
    if (dim < 0) dim += xc.dim();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= xc.size(d);
    for (int64_t d = dim + 1; d < xc.dim(); ++d) inner *= xc.size(d);
    auto sizes = xc.sizes().vec();
    sizes[dim] = 1;
    auto y = torch::empty(sizes, xc.options());
    const int threads = 256;
    const int64_t blocks = (outer * inner + threads - 1) / threads;
    sum_dim_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), outer, xc.size(dim), inner);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

sum_ext = load_inline(
    name="kforge_cuda_sum_dim",
    cpp_sources="torch::Tensor sum_dim_cuda(torch::Tensor x, int64_t dim);",
    cuda_sources=sum_cuda_src,
    functions=["sum_dim_cuda"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return sum_ext.sum_dim_cuda(x, self.dim)
