"""Apple Metal backend: Metal Shading Language kernels compiled with torch.mps.compile_shader and run on
an `mps` device. Needs macOS with an Apple GPU; elsewhere it reports why it is unavailable."""

from __future__ import annotations

import platform

from kforge_core.backends.base import Availability, Backend


def metal_availability(system: str | None = None) -> Availability:
    system = system or platform.system()
    if system != "Darwin":
        return Availability(False, f"Apple Metal needs macOS on Apple silicon; this machine runs {system}")
    try:
        import torch
    except Exception as e:  # pragma: no cover
        return Availability(False, f"torch not importable: {e}")
    if not torch.backends.mps.is_available():
        return Availability(False, "torch reports no MPS device (needs an Apple GPU and macOS 12.3+)")
    if not hasattr(torch.mps, "compile_shader"):
        return Availability(False, f"torch {torch.__version__} lacks torch.mps.compile_shader (needs 2.6+)")
    return Availability(True)


class MetalBackend(Backend):
    name = "metal"
    language = "Metal Shading Language via torch.mps.compile_shader"
    kernel_markers = (r"compile_shader\s*\(", r"\bkernel\s+void\b")

    def device(self) -> str:
        return "mps"

    def available(self) -> Availability:
        return metal_availability()
