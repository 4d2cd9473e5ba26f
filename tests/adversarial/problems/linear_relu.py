import torch
import torch.nn as nn


class Model(nn.Module):
    """A library GEMM with an epilogue: the shape of most KernelBench level-2 problems."""

    def __init__(self, n_in: int, n_out: int):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x))


def get_inputs():
    return [torch.randn(256, 512)]


def get_init_inputs():
    return [512, 512]
