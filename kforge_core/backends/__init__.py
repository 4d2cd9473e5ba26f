"""Registry of target backends."""

from __future__ import annotations

from kforge_core.backends.base import Availability, Backend
from kforge_core.backends.cpu import CpuBackend
from kforge_core.backends.cuda import CudaBackend
from kforge_core.backends.metal import MetalBackend
from kforge_core.backends.triton import TritonBackend

_BACKENDS: dict[str, Backend] = {b.name: b for b in (CpuBackend(), CudaBackend(), TritonBackend(), MetalBackend())}


class UnknownBackend(KeyError):
    pass


def get_backend(name: str) -> Backend:
    try:
        return _BACKENDS[name]
    except KeyError:
        raise UnknownBackend(f"unknown backend {name!r}; known: {', '.join(_BACKENDS)}") from None


def all_backends() -> list[Backend]:
    return list(_BACKENDS.values())


__all__ = ["Availability", "Backend", "get_backend", "all_backends", "UnknownBackend"]
