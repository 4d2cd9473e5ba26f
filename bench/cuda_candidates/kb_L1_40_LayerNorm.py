"""KernelBench level1/40: LayerNorm over the last three dims (4M elements a row, 16 rows): a partial-sum kernel
over many blocks per row, a per-row finish, and an elementwise normalise with the module's own weight and bias
(bench/build_paths.py)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

constexpr int CHUNKS = 256;  // blocks per row for the partial sums

__global__ void partial_sums(const float* __restrict__ x, double* __restrict__ part, int64_t row_len) {
    const int64_t row = blockIdx.y, chunk = blockIdx.x;
    const int64_t per = (row_len + CHUNKS - 1) / CHUNKS;
    const int64_t lo = chunk * per, hi = min(row_len, lo + per);
    double s = 0.0, q = 0.0;
    for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) {
        const double v = x[row * row_len + i];
        s += v; q += v * v;
    }
    __shared__ double bs[256], bq[256];
    bs[threadIdx.x] = s; bq[threadIdx.x] = q;
    __syncthreads();
    for (int o = blockDim.x / 2; o > 0; o >>= 1) {
        if (threadIdx.x < o) { bs[threadIdx.x] += bs[threadIdx.x + o]; bq[threadIdx.x] += bq[threadIdx.x + o]; }
        __syncthreads();
    }
    if (threadIdx.x == 0) { part[(row * CHUNKS + chunk) * 2] = bs[0]; part[(row * CHUNKS + chunk) * 2 + 1] = bq[0]; }
}

__global__ void row_stats(const double* __restrict__ part, float* __restrict__ stats, int64_t row_len, float eps) {
    const int64_t row = blockIdx.x;
    double s = 0.0, q = 0.0;
    for (int c = 0; c < CHUNKS; ++c) { s += part[(row * CHUNKS + c) * 2]; q += part[(row * CHUNKS + c) * 2 + 1]; }
    const double mean = s / row_len, var = q / row_len - mean * mean;
    stats[row * 2] = (float)mean;
    stats[row * 2 + 1] = (float)(1.0 / sqrt(var + (double)eps));
}

__global__ void normalise(const float* __restrict__ x, const float* __restrict__ stats, const float* __restrict__ w,
                          const float* __restrict__ b, float* __restrict__ y, int64_t row_len, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t row = i / row_len, j = i - row * row_len;
        y[i] = (x[i] - stats[row * 2]) * stats[row * 2 + 1] * w[j] + b[j];
    }
}

torch::Tensor layer_norm(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
    auto xc = x.contiguous();
    const int64_t row_len = w.numel(), rows = xc.numel() / row_len;
    auto part = torch::empty({rows * CHUNKS * 2}, xc.options().dtype(torch::kFloat64));
    auto stats = torch::empty({rows * 2}, xc.options());
    auto y = torch::empty_like(xc);
    auto stream = at::cuda::getCurrentCUDAStream();
    partial_sums<<<dim3(CHUNKS, (unsigned)rows), 256, 0, stream>>>(xc.data_ptr<float>(), part.data_ptr<double>(), row_len);
    row_stats<<<(unsigned)rows, 1, 0, stream>>>(part.data_ptr<double>(), stats.data_ptr<float>(), row_len, (float)eps);
    const int64_t n = xc.numel();
    normalise<<<(unsigned)std::min<int64_t>((n + 255) / 256, 65535), 256, 0, stream>>>(
        xc.data_ptr<float>(), stats.data_ptr<float>(), w.contiguous().data_ptr<float>(), b.contiguous().data_ptr<float>(),
        y.data_ptr<float>(), row_len, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

ext = load_inline(name="kb40_layer_norm",
                  cpp_sources="torch::Tensor layer_norm(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps);",
                  cuda_sources=cuda_src, functions=["layer_norm"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x):
        return ext.layer_norm(x, self.ln.weight, self.ln.bias, self.ln.eps)
