import torch
import torch.nn as nn


class Model(nn.Module):
    """Layer normalisation over the last dimension with a learned affine transform."""

    def __init__(self, normalized_shape: int):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


batch_size = 32
seq_len = 128
hidden = 512


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden]
