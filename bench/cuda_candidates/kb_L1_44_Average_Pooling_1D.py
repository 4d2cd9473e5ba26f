"""KernelBench level1/44: AvgPool1d (kernel 8, stride 1, padding 4, count_include_pad), one output per thread
(bench/build_paths.py)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void avg_pool1d_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t rows, int64_t len,
                                  int64_t out_len, int k, int stride, int pad) {
    const int64_t n = rows * out_len;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / out_len, o = i - r * out_len;
        const int64_t start = o * stride - pad;
        float s = 0.f;
        for (int t = 0; t < k; ++t) {
            const int64_t p = start + t;
            if (p >= 0 && p < len) s += x[r * len + p];
        }
        y[i] = s / (float)k;
    }
}

torch::Tensor avg_pool1d(torch::Tensor x, int64_t k, int64_t stride, int64_t pad) {
    TORCH_CHECK(x.dim() == 3, "expects (N, C, L)");
    auto xc = x.contiguous();
    const int64_t len = xc.size(2), rows = xc.size(0) * xc.size(1);
    const int64_t out_len = (len + 2 * pad - k) / stride + 1;
    auto y = torch::empty({xc.size(0), xc.size(1), out_len}, xc.options());
    const int64_t n = rows * out_len;
    avg_pool1d_kernel<<<(unsigned)std::min<int64_t>((n + 255) / 256, 1 << 20), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), rows, len, out_len, (int)k, (int)stride, (int)pad);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

ext = load_inline(name="kb44_avg_pool1d", cpp_sources="torch::Tensor avg_pool1d(torch::Tensor x, int64_t k, int64_t stride, int64_t pad);",
                  cuda_sources=cuda_src, functions=["avg_pool1d"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int = 1, padding: int = 0):
        super().__init__()
        self.k, self.stride, self.pad = kernel_size, stride or kernel_size, padding

    def forward(self, x):
        return ext.avg_pool1d(x, self.k, self.stride, self.pad)
