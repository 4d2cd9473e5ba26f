# tries: native code that sets a module attribute through the C API (PyImport_ImportModule + PyObject_SetAttrString)
# expect: static_rejected
# message: enters the Python interpreter

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
void install(pybind11::object fake) {
    PyObject* m = PyImport_ImportModule("statistics");
    PyObject_SetAttrString(m, "median", fake.ptr());
}
torch::Tensor relu(torch::Tensor x) { return x.clamp_min(0); }
"""

ext = load_inline(name="kforge_adversarial_capi", cpp_sources=_CPP, functions=["install", "relu"])
ext.install(min)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
