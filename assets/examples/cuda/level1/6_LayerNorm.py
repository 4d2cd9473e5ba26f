import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

layernorm_cuda_src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}

__device__ float block_sum(float v, float* smem) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    v = warp_sum(v);
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    v = lane < nwarps ? smem[lane] : 0.f;
    if (warp == 0) v = warp_sum(v);
    if (threadIdx.x == 0) smem[0] = v;
    __syncthreads();
    v = smem[0];
    __syncthreads();
    return v;
}

// One block per row; two-pass mean / variance from registers-resident values (cols <= 4 * blockDim).
__global__ void layernorm_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                                 float* __restrict__ y, int cols, float eps) {
    __shared__ float smem[32];
    const float* xr = x + (int64_t)blockIdx.x * cols;
    float* yr = y + (int64_t)blockIdx.x * cols;
    float v[4];
    int k = 0;
    float s = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x, ++k) { v[k] = xr[c]; s += v[k]; }
    const float mean = block_sum(s, smem) / cols;
    float sq = 0.f;
    for (int i = 0; i < k; ++i) { const float d = v[i] - mean; sq += d * d; }
    const float rstd = rsqrtf(block_sum(sq, smem) / cols + eps);
    k = 0;
    for (int c = threadIdx.x; c < cols; c += blockDim.x, ++k) yr[c] = (v[k] - mean) * rstd * w[c] + b[c];
}

torch::Tensor layernorm_cuda(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expects a float32 CUDA tensor");
    const int cols = (int)x.size(-1);
    const int threads = 128;
    TORCH_CHECK(cols <= 4 * threads, "this kernel handles rows of at most 512 elements");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t rows = xc.numel() / cols;
    layernorm_kernel<<<rows, threads, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), w.contiguous().data_ptr<float>(),
                                        b.contiguous().data_ptr<float>(), y.data_ptr<float>(), cols, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

layernorm_ext = load_inline(
    name="kforge_cuda_layernorm",
    cpp_sources="torch::Tensor layernorm_cuda(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps);",
    cuda_sources=layernorm_cuda_src,
    functions=["layernorm_cuda"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: int):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)  # holds the learned weight and bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return layernorm_ext.layernorm_cuda(x, self.ln.weight, self.ln.bias, self.ln.eps)
