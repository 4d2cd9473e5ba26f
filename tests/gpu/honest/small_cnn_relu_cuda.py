import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

# Own ReLU kernels; the convolutions, linear layers and pooling stay in PyTorch (cuDNN / cuBLAS): an honest
# partial replacement, as in KernelBench's MNIST few-shot example.
_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void relu_kernel(const float* x, float* y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
torch::Tensor relu_cuda(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    int64_t n = xc.numel();
    relu_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

ext = load_inline(name="kforge_honest_small_cnn_relu", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
                  cuda_sources=_SRC, functions=["relu_cuda"])


class ModelNew(nn.Module):
    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3)
        self.conv2 = nn.Conv2d(32, 64, 3)
        self.fc1 = nn.Linear(64 * 12 * 12, 128)
        self.fc2 = nn.Linear(128, num_classes)

    def forward(self, x):
        x = ext.relu_cuda(self.conv1(x))
        x = F.max_pool2d(ext.relu_cuda(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = ext.relu_cuda(self.fc1(x))
        return self.fc2(x)
