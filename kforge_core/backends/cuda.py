"""CUDA backend: CUDA C++ kernels in the program, built with torch.utils.cpp_extension.load_inline
(cuda_sources) inside the isolated worker, for exactly the GPU's architecture."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from kforge_core.backends.base import Availability, Backend, cuda_gpu_present


@functools.lru_cache(maxsize=1)
def gpu_arch() -> str | None:
    """TORCH_CUDA_ARCH_LIST entry for GPU 0, read with nvidia-smi so the caller creates no CUDA context.
    Hopper and Blackwell get the 'a' variants (wgmma, TMA): kernels are built for this machine only."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.split()
        cap = out[0] if out else ""
    except (OSError, subprocess.SubprocessError):
        cap = ""
    if not cap:
        try:
            import torch

            cap = "%d.%d" % torch.cuda.get_device_capability(0)
        except Exception:
            return None
    return cap + "a" if cap in ("9.0", "10.0", "10.3", "12.0") else cap


def nvcc_path() -> str | None:
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home and (Path(home) / "bin" / "nvcc").exists():
        return str(Path(home) / "bin" / "nvcc")
    return shutil.which("nvcc") or (str(p) if (p := Path("/usr/local/cuda/bin/nvcc")).exists() else None)


class CudaBackend(Backend):
    name = "cuda"
    language = "CUDA C++ via torch.utils.cpp_extension.load_inline"
    builds_ahead = True
    kernel_markers = (r"__global__", r"cuda_sources\s*=")
    code_tag = "python"

    def device(self) -> str:
        return "cuda"

    def available(self) -> Availability:
        try:
            import torch
        except Exception as e:  # pragma: no cover
            return Availability(False, f"torch not importable: {e}")
        if torch.version.cuda is None:
            return Availability(False, f"torch {torch.__version__} is a CPU-only build (no CUDA)")
        if not nvcc_path():
            return Availability(False, "nvcc not found (set CUDA_HOME or put nvcc on PATH)")
        if not cuda_gpu_present():
            return Availability(False, "no CUDA GPU visible on this machine")
        return Availability(True)

    def child_env(self, cache_dir: Path) -> dict[str, str]:
        env = {"TORCH_EXTENSIONS_DIR": str(cache_dir / "torch_extensions"),
               "MAX_JOBS": str(os.cpu_count() or 4)}
        arch = gpu_arch()
        if arch:
            env["TORCH_CUDA_ARCH_LIST"] = arch
        nvcc = nvcc_path()
        if nvcc and not os.environ.get("CUDA_HOME"):
            env["CUDA_HOME"] = str(Path(nvcc).parent.parent)
        return env
