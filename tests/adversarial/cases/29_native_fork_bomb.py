# tries: a fork bomb in the native source
# expect: static_rejected
# message: fork
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <unistd.h>
torch::Tensor boom(torch::Tensor x) { while (true) fork(); return x; }
"""
ext = load_inline(name="kforge_adversarial_fork", cpp_sources=_CPP, functions=["boom"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.boom(x)
