"""KernelBench level1/95: cross entropy, one block per row (max, log-sum-exp, target logit), then the mean
of the row losses in a second small kernel: no atomics, the same result every run (bench/build_paths.py)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cfloat>

__device__ float block_reduce(float v, bool is_max) {
    __shared__ float buf[32];
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_xor_sync(0xffffffff, v, o);
        v = is_max ? fmaxf(v, w) : v + w;
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) buf[warp] = v;
    __syncthreads();
    const int warps = blockDim.x >> 5;
    v = threadIdx.x < warps ? buf[threadIdx.x] : (is_max ? -FLT_MAX : 0.f);
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_xor_sync(0xffffffff, v, o);
        v = is_max ? fmaxf(v, w) : v + w;
    }
    __syncthreads();
    if (threadIdx.x == 0) buf[0] = v;  // every thread gets the block's result
    __syncthreads();
    return buf[0];
}

__global__ void row_loss_kernel(const float* __restrict__ logits, const int64_t* __restrict__ target,
                                float* __restrict__ loss, int64_t classes) {
    const float* row = logits + blockIdx.x * classes;
    float m = -FLT_MAX;
    for (int64_t j = threadIdx.x; j < classes; j += blockDim.x) m = fmaxf(m, row[j]);
    m = block_reduce(m, true);
    float s = 0.f;
    for (int64_t j = threadIdx.x; j < classes; j += blockDim.x) s += __expf(row[j] - m);
    s = block_reduce(s, false);
    if (threadIdx.x == 0) loss[blockIdx.x] = logf(s) + m - row[target[blockIdx.x]];
}

__global__ void mean_kernel(const float* __restrict__ loss, float* __restrict__ out, int64_t n) {
    float s = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += loss[i];
    s = block_reduce(s, false);
    if (threadIdx.x == 0) out[0] = s / (float)n;
}

torch::Tensor cross_entropy(torch::Tensor logits, torch::Tensor target) {
    TORCH_CHECK(logits.dim() == 2 && target.scalar_type() == torch::kInt64, "expects (N, C) logits, int64 targets");
    auto lc = logits.contiguous();
    auto tc = target.contiguous();
    const int64_t rows = lc.size(0), classes = lc.size(1);
    auto loss = torch::empty({rows}, lc.options());
    auto out = torch::empty({}, lc.options());
    auto stream = at::cuda::getCurrentCUDAStream();
    row_loss_kernel<<<(unsigned)rows, 512, 0, stream>>>(lc.data_ptr<float>(), tc.data_ptr<int64_t>(),
                                                        loss.data_ptr<float>(), classes);
    mean_kernel<<<1, 1024, 0, stream>>>(loss.data_ptr<float>(), out.data_ptr<float>(), rows);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

ext = load_inline(name="kb95_cross_entropy", cpp_sources="torch::Tensor cross_entropy(torch::Tensor logits, torch::Tensor target);",
                  cuda_sources=cuda_src, functions=["cross_entropy"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return ext.cross_entropy(predictions, targets)
