"""Registry of target backends: short name -> "module:Class", imported on first use (see registry.py for
third-party backends through entry points of the group "kforge.backends" or a "module:Class" name)."""

from __future__ import annotations

from kforge_core.backends.base import Availability, Backend
from kforge_core.registry import Registry

BACKENDS = Registry("backend", "kforge.backends", {
    "cpu": "kforge_core.backends.cpu:CpuBackend",
    "cuda": "kforge_core.backends.cuda:CudaBackend",
    "triton": "kforge_core.backends.triton:TritonBackend",
    "metal": "kforge_core.backends.metal:MetalBackend",
})
_instances: dict[str, Backend] = {}


class UnknownBackend(KeyError):
    pass


def get_backend(name: str) -> Backend:
    if name not in _instances:
        try:
            _instances[name] = BACKENDS.load(name)()
        except KeyError as e:
            raise UnknownBackend(e.args[0]) from None
    return _instances[name]


def all_backends() -> list[Backend]:
    return [get_backend(n) for n in BACKENDS.names()]


__all__ = ["Availability", "Backend", "BACKENDS", "get_backend", "all_backends", "UnknownBackend"]
