import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# Shared-memory tiles, launched on the legacy default stream (no stream argument), as many example
# kernels are written: the harness must time it right and must not flag it.
_SRC = r"""
#include <torch/extension.h>
#define TILE 16
__global__ void tiled_matmul(const float* A, const float* B, float* C, int N) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.f;
    for (int t = 0; t < (N + TILE - 1) / TILE; ++t) {
        int ak = t * TILE + threadIdx.x, bk = t * TILE + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < N && ak < N) ? A[row * N + ak] : 0.f;
        Bs[threadIdx.y][threadIdx.x] = (bk < N && col < N) ? B[bk * N + col] : 0.f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < N && col < N) C[row * N + col] = acc;
}
torch::Tensor matmul_tiled(torch::Tensor A, torch::Tensor B) {
    int N = A.size(0);
    auto C = torch::zeros({N, N}, A.options());
    dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (N + TILE - 1) / TILE);
    tiled_matmul<<<grid, block>>>(A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), N);
    return C;
}
"""

ext = load_inline(name="kforge_honest_tiled_matmul", cpp_sources="torch::Tensor matmul_tiled(torch::Tensor A, torch::Tensor B);",
                  cuda_sources=_SRC, functions=["matmul_tiled"])


class ModelNew(nn.Module):
    def forward(self, A, B):
        return ext.matmul_tiled(A.contiguous(), B.contiguous())
