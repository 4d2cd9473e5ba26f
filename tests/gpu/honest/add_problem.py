import torch
import torch.nn as nn


class Model(nn.Module):
    """Elementwise a + b on small tensors: a launch-bound kernel, where clocks disagree most."""

    def forward(self, a, b):
        return a + b


def get_inputs():
    return [torch.randn(1, 128), torch.randn(1, 128)]


def get_init_inputs():
    return []
