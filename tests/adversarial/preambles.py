"""Code the runner puts in front of a case whose header says `# preamble: NAME`: a small compiled
extension `ext`, the same text for every case of a backend, so the suite compiles it once."""

CPU_RELU_EXT = r'''import os
import time
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cstdlib>

torch::Tensor relu(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* a = xc.data_ptr<float>(); float* b = y.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) b[i] = a[i] > 0.f ? a[i] : 0.f;
    return y;
}
torch::Tensor relu_inplace(torch::Tensor x) {
    float* a = x.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) a[i] = a[i] > 0.f ? a[i] : 0.f;
    return x;
}
torch::Tensor relu_via_aten(torch::Tensor x) { return torch::relu(x); }
torch::Tensor segfault(torch::Tensor x) { volatile int* p = nullptr; *p = 1; return x; }
torch::Tensor abort_now(torch::Tensor x) { std::abort(); return x; }
torch::Tensor spin(torch::Tensor x) { volatile long i = 0; while (true) { i = i + 1; } return x; }
"""

ext = load_inline(name="kforge_adversarial_cpu", cpp_sources=_CPP,
                  functions=["relu", "relu_inplace", "relu_via_aten", "segfault", "abort_now", "spin"],
                  extra_cflags=["-O2"])
'''

CUDA_RELU_EXT = r'''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CU = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void relu_k(const float* x, float* y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.f);
}
__global__ void wild_k(float* y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i + (int64_t(1) << 40)] = 1.f;
}
torch::Tensor relu(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    int64_t n = xc.numel();
    relu_k<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
torch::Tensor wild_write(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    wild_k<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(y.data_ptr<float>(), n);
    return y;
}
"""

ext = load_inline(name="kforge_adversarial_cuda", cpp_sources="torch::Tensor relu(torch::Tensor x);\ntorch::Tensor wild_write(torch::Tensor x);",
                  cuda_sources=_CU, functions=["relu", "wild_write"], extra_cuda_cflags=["-O2"])
'''

PREAMBLES = {("relu_ext", "cpu"): CPU_RELU_EXT, ("relu_ext", "cuda"): CUDA_RELU_EXT}
