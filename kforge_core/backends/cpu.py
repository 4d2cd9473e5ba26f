"""CPU backend: C++ (OpenMP allowed) kernels built with torch.utils.cpp_extension.load_inline.

It needs no GPU, so the whole product (agents, evaluator, app) runs and is tested on any machine.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from kforge_core.backends.base import Availability, Backend


class CpuBackend(Backend):
    name = "cpu"
    language = "C++ (OpenMP) via torch.utils.cpp_extension"
    builds_ahead = True
    kernel_markers = (r"\bload_inline\s*\(", r"cpp_extension\s*\.\s*load\s*\(")

    def available(self) -> Availability:
        if not (shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")):
            return Availability(False, "no C++ compiler on PATH (install g++ or clang++)")
        try:
            import torch.utils.cpp_extension  # noqa: F401
        except Exception as e:  # pragma: no cover - torch is a hard requirement
            return Availability(False, f"torch.utils.cpp_extension unavailable: {e}")
        return Availability(True)

    def child_env(self, cache_dir: Path) -> dict[str, str]:
        # A persistent extensions dir makes re-evaluating an unchanged source a cache hit.
        return {"TORCH_EXTENSIONS_DIR": str(cache_dir / "torch_extensions")}
