"""CUDA candidates for the GPU tests: one CUDA source, several kernels (one build for all of them)."""

KERNELS_CU = r'''
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void relu_k(const float* x, float* y, int64_t n, float bias) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.f) + (x[i] > 0.f ? bias : 0.f);
}

__global__ void wild_write_k(float* y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i + (int64_t(1) << 40)] = 1.f;   // far outside any allocation
}

static torch::Tensor launch_relu(torch::Tensor x, float bias) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    int64_t n = xc.numel();
    relu_k<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n, bias);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}

torch::Tensor relu_ok(torch::Tensor x) { return launch_relu(x, 0.f); }
torch::Tensor relu_off_by_a_bit(torch::Tensor x) { return launch_relu(x, 0.01f); }

torch::Tensor illegal_access(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    wild_write_k<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(y.data_ptr<float>(), n);
    return y;
}
'''

DECLS = """torch::Tensor relu_ok(torch::Tensor x);
torch::Tensor relu_off_by_a_bit(torch::Tensor x);
torch::Tensor illegal_access(torch::Tensor x);"""


def cuda_candidate(forward_body: str) -> str:
    return f'''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CU = r"""{KERNELS_CU}"""

ext = load_inline(name="kforge_gpu_test_kernels", cpp_sources="""{DECLS}""", cuda_sources=CU,
                  functions=["relu_ok", "relu_off_by_a_bit", "illegal_access"], extra_cuda_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        {forward_body}
'''
