"""Builds candidate programs for the CPU-backend tests. All of them embed one C++ source with several
kernels (correct, wrong, crashing, hanging, allocating), so the test session compiles it once and each
candidate is still a complete, real program that calls a real compiled kernel."""

KERNELS_CPP = r'''
#include <torch/extension.h>
#include <vector>
#include <cstdlib>

torch::Tensor relu_ok(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* a = xc.data_ptr<float>(); float* b = y.data_ptr<float>();
    const int64_t n = xc.numel();
    #pragma omp parallel for
    for (int64_t i = 0; i < n; ++i) b[i] = a[i] > 0.f ? a[i] : 0.f;
    return y;
}

torch::Tensor relu_off_by_a_bit(torch::Tensor x) {   // wrong numerics: adds 0.01 to positives
    auto y = relu_ok(x);
    float* b = y.data_ptr<float>();
    for (int64_t i = 0; i < y.numel(); ++i) if (b[i] > 0.f) b[i] += 0.01f;
    return y;
}

torch::Tensor relu_drops_last_row(torch::Tensor x) {   // wrong shape
    return relu_ok(x).narrow(0, 0, x.size(0) - 1).clone();
}

torch::Tensor segfault(torch::Tensor x) {
    volatile int* p = nullptr;
    *p = 42;
    return x;
}

torch::Tensor abort_now(torch::Tensor x) {
    std::abort();
    return x;
}

torch::Tensor spin_forever(torch::Tensor x) {
    volatile int64_t i = 0;
    while (true) { i = i + 1; }
    return x;
}

torch::Tensor allocate_100gb(torch::Tensor x) {
    std::vector<float> huge(size_t(25) * 1000 * 1000 * 1000, 1.0f);   // 100 GB, touched
    x.data_ptr<float>()[0] = huge[huge.size() - 1];
    return x;
}
'''

FUNCTIONS = ["relu_ok", "relu_off_by_a_bit", "relu_drops_last_row", "segfault", "abort_now", "spin_forever",
             "allocate_100gb"]


def candidate(forward_body: str, name: str = "kforge_test_kernels", cpp: str = KERNELS_CPP,
              functions=None) -> str:
    """A ModelNew program whose forward(x) runs `forward_body` (which may use `ext`)."""
    return f'''import os
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""{cpp}"""

ext = load_inline(name="{name}", cpp_sources=CPP, functions={functions or FUNCTIONS!r},
                  extra_cflags=["-O2", "-fopenmp"], extra_ldflags=["-fopenmp"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        {forward_body}
'''
