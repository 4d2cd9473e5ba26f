"""KernelBench level1/23_Softmax at its real size (4096 rows of 393216): one block per row, an online
max-and-sum pass then a normalising pass (bench/build_paths.py)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

// (m, s): running max and the sum of exp(x - m); merging two keeps the sum relative to the larger max
__device__ __forceinline__ void merge(float& m, float& s, float om, float os) {
    const float nm = fmaxf(m, om);
    if (nm == -INFINITY) return;  // both empty
    s = s * expf(m - nm) + os * expf(om - nm);
    m = nm;
}

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    const float* xr = x + (int64_t)blockIdx.x * cols;
    float* yr = y + (int64_t)blockIdx.x * cols;
    float m = -INFINITY, s = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        const float v = xr[j];
        if (v > m) { s = s * expf(m - v) + 1.0f; m = v; } else { s += expf(v - m); }
    }
    for (int off = 16; off > 0; off >>= 1)
        merge(m, s, __shfl_xor_sync(0xffffffffu, m, off), __shfl_xor_sync(0xffffffffu, s, off));
    __shared__ float wm[32], ws[32];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) { wm[warp] = m; ws[warp] = s; }
    __syncthreads();
    if (warp == 0) {
        const int nw = blockDim.x / 32;
        m = lane < nw ? wm[lane] : -INFINITY;
        s = lane < nw ? ws[lane] : 0.0f;
        for (int off = 16; off > 0; off >>= 1)
            merge(m, s, __shfl_xor_sync(0xffffffffu, m, off), __shfl_xor_sync(0xffffffffu, s, off));
        if (lane == 0) { wm[0] = m; ws[0] = s; }
    }
    __syncthreads();
    const float row_max = wm[0], inv = 1.0f / ws[0];
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = expf(xr[j] - row_max) * inv;
}

torch::Tensor softmax(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.dim() == 2, "expects 2-D float32 CUDA");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    softmax_rows<<<(unsigned)xc.size(0), 1024>>>(xc.data_ptr<float>(), y.data_ptr<float>(), xc.size(1));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

ext = load_inline(name="kb23_softmax", cpp_sources="torch::Tensor softmax(torch::Tensor x);",
                  cuda_sources=cuda_src, functions=["softmax"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.softmax(x)
