"""Fingerprints of tensors: detect that values changed (an input mutated in place, an output that stays the
same whatever the input) without keeping a full copy. A copy of a 6 GB input is 6 GB of device memory the
harness may not have; a fingerprint is 16 bytes per tensor, computed in chunks.

The weights are drawn from os.urandom when the module is first used in a worker, after nothing but the
harness has run, so a candidate cannot craft a change that keeps the fingerprint.
"""

from __future__ import annotations

import os

import torch

CHUNK = 1 << 22  # elements per step: the temporaries stay ~4 x 32 MB

_MULT = int.from_bytes(os.urandom(4), "little") | 1
_ADD = int.from_bytes(os.urandom(4), "little")


def _words(t: torch.Tensor) -> torch.Tensor:
    """The tensor's bytes as a flat integer tensor (no copy where the layout allows)."""
    t = t.detach()
    if t.is_complex():
        t = torch.view_as_real(t)
    t = t.contiguous().reshape(-1)
    nbytes = t.numel() * t.element_size()
    for dtype, size in ((torch.int64, 8), (torch.int32, 4), (torch.int16, 2)):
        if t.element_size() >= size and nbytes % size == 0:
            return t.view(torch.uint8).view(dtype) if t.element_size() != size else t.view(dtype)
    return t.view(torch.uint8)


def fingerprint(t: torch.Tensor) -> tuple[int, int, tuple, torch.dtype]:
    """(sum, position-weighted sum, shape, dtype) of the tensor's bits; equal bits give equal fingerprints."""
    words = _words(t)
    total = weighted = 0
    for start in range(0, words.numel(), CHUNK):
        w = words[start:start + CHUNK].to(torch.int64)
        pos = torch.arange(start, start + w.numel(), device=w.device, dtype=torch.int64)
        weights = pos * _MULT + _ADD  # int64 arithmetic wraps: a pseudo-random weight per position
        total += int(w.sum())
        weighted += int((w * weights).sum())
        del w, pos, weights
    return total, weighted, tuple(t.shape), t.dtype


def fingerprints(tensors: list[torch.Tensor]) -> list[tuple]:
    return [fingerprint(t) for t in tensors]
