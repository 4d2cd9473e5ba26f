# tries: from the extension's C++ (pybind11), replace time.perf_counter with a clock that stops while the kernel runs
# expect: static_rejected
# message: enters the Python interpreter

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <chrono>
namespace py = pybind11;
static double stolen = 0.0;
static double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
torch::Tensor relu_hidden(torch::Tensor x) {
    const double t0 = now_s();
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* a = xc.data_ptr<float>(); float* b = y.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) b[i] = a[i] > 0.f ? a[i] : 0.f;
    stolen += now_s() - t0;
    return y;
}
void install() {
    py::module_::import("time").attr("perf_counter") = py::cpp_function([]() { return now_s() - stolen; });
}
"""

ext = load_inline(name="kforge_adversarial_native_clock", cpp_sources=_CPP, functions=["relu_hidden", "install"],
                  extra_cflags=["-O2"])
ext.install()


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_hidden(x)
