# tries: a build that never finishes (constexpr evaluation of ~4e10 steps)
# expect: timeout
# settings: build_timeout_s=25
# message: during build
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
constexpr long long burn() {
    long long s = 0;
    for (long long i = 0; i < 200000; ++i)
        for (long long j = 0; j < 200000; ++j) s += i ^ j;
    return s;
}
constexpr long long kBurnt = burn();
torch::Tensor relu(torch::Tensor x) { return x.clamp_min(kBurnt ? 0 : 0); }
"""
ext = load_inline(name="kforge_adversarial_burn", cpp_sources=_CPP, functions=["relu"],
                  extra_cflags=["-fconstexpr-ops-limit=1000000000000", "-fconstexpr-loop-limit=100000000"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
