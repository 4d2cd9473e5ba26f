import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

fused_cuda_src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

// y = clamp(x * scale + r, lo, hi): one kernel, two reads and one write per element (eager runs three).
__global__ void scale_add_clamp_kernel(const float4* __restrict__ x, const float4* __restrict__ r,
                                       float4* __restrict__ y, int64_t n4, float s, float lo, float hi) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n4; i += (int64_t)gridDim.x * blockDim.x) {
        float4 a = x[i], b = r[i], o;
        o.x = fminf(fmaxf(fmaf(a.x, s, b.x), lo), hi);
        o.y = fminf(fmaxf(fmaf(a.y, s, b.y), lo), hi);
        o.z = fminf(fmaxf(fmaf(a.z, s, b.z), lo), hi);
        o.w = fminf(fmaxf(fmaf(a.w, s, b.w), lo), hi);
        y[i] = o;
    }
}

torch::Tensor scale_add_clamp_cuda(torch::Tensor x, torch::Tensor r, double s, double lo, double hi) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.sizes() == r.sizes(), "bad inputs");
    TORCH_CHECK(x.numel() % 4 == 0, "numel must be a multiple of 4");
    auto xc = x.contiguous(), rc = r.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t n4 = xc.numel() / 4;
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n4 + threads - 1) / threads, 65535);
    scale_add_clamp_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        reinterpret_cast<const float4*>(xc.data_ptr<float>()), reinterpret_cast<const float4*>(rc.data_ptr<float>()),
        reinterpret_cast<float4*>(y.data_ptr<float>()), n4, (float)s, (float)lo, (float)hi);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

fused_ext = load_inline(
    name="kforge_cuda_scale_add_clamp",
    cpp_sources="torch::Tensor scale_add_clamp_cuda(torch::Tensor x, torch::Tensor r, double s, double lo, double hi);",
    cuda_sources=fused_cuda_src,
    functions=["scale_add_clamp_cuda"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, scale: float, clamp_min: float, clamp_max: float):
        super().__init__()
        self.scale = scale
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return fused_ext.scale_add_clamp_cuda(x, residual, self.scale, self.clamp_min, self.clamp_max)
