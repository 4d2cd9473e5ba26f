import torch
import torch.nn as nn


class Model(nn.Module):
    """A scalar output of ~1e-7: any absolute tolerance of 1e-6 or more accepts a wrong answer."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * 1e-4).mean()


def get_inputs():
    return [torch.randn(1 << 20)]


def get_init_inputs():
    return []
