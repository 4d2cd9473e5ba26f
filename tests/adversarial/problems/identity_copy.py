import torch
import torch.nn as nn


class Model(nn.Module):
    """Returns a fresh copy of its input (an output that aliases the input would look identical)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.clone()


def get_inputs():
    return [torch.randn(256, 256)]


def get_init_inputs():
    return []
