"""KernelBench level1/42: MaxPool2d (kernel 4, stride 1, padding 1, dilation 1), one output per thread
(bench/build_paths.py)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cfloat>

__global__ void max_pool2d_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t planes, int h, int w,
                                  int oh, int ow, int k, int stride, int pad, int dil) {
    const int64_t n = planes * oh * ow;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t p = i / ((int64_t)oh * ow);
        const int rem = (int)(i - p * oh * ow), oy = rem / ow, ox = rem - oy * ow;
        const float* plane = x + p * h * w;
        float m = -FLT_MAX;
        for (int ky = 0; ky < k; ++ky) {
            const int iy = oy * stride - pad + ky * dil;
            if (iy < 0 || iy >= h) continue;
            for (int kx = 0; kx < k; ++kx) {
                const int ix = ox * stride - pad + kx * dil;
                if (ix >= 0 && ix < w) m = fmaxf(m, plane[iy * w + ix]);
            }
        }
        y[i] = m;
    }
}

torch::Tensor max_pool2d(torch::Tensor x, int64_t k, int64_t stride, int64_t pad, int64_t dil) {
    TORCH_CHECK(x.dim() == 4, "expects (N, C, H, W)");
    auto xc = x.contiguous();
    const int h = (int)xc.size(2), w = (int)xc.size(3);
    const int oh = (int)((h + 2 * pad - dil * (k - 1) - 1) / stride + 1);
    const int ow = (int)((w + 2 * pad - dil * (k - 1) - 1) / stride + 1);
    auto y = torch::empty({xc.size(0), xc.size(1), (int64_t)oh, (int64_t)ow}, xc.options());
    const int64_t planes = xc.size(0) * xc.size(1), n = planes * oh * ow;
    max_pool2d_kernel<<<(unsigned)std::min<int64_t>((n + 255) / 256, 1 << 20), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), planes, h, w, oh, ow, (int)k, (int)stride, (int)pad, (int)dil);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

ext = load_inline(name="kb42_max_pool2d",
                  cpp_sources="torch::Tensor max_pool2d(torch::Tensor x, int64_t k, int64_t stride, int64_t pad, int64_t dil);",
                  cuda_sources=cuda_src, functions=["max_pool2d"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super().__init__()
        self.args = (kernel_size, stride, padding, dilation)

    def forward(self, x):
        return ext.max_pool2d(x, *self.args)
