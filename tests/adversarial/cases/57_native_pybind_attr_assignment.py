# tries: native code that imports torch.cuda through pybind11 and assigns one of its attributes
# expect: static_rejected
# message: enters the Python interpreter

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
namespace py = pybind11;
void install() {
    py::object cuda = py::module_::import("torch.cuda");
    cuda.attr("synchronize") = py::cpp_function([]() {});
}
torch::Tensor relu(torch::Tensor x) { return x.clamp_min(0); }
"""

ext = load_inline(name="kforge_adversarial_attr", cpp_sources=_CPP, functions=["install", "relu"])
ext.install()


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
