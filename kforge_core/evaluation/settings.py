"""Knobs of one evaluation. Plain data so it crosses the process boundary as JSON."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

# (atol, rtol) per dtype. fp32 allows for a different summation order over a few thousand terms
# (relative error ~ sqrt(K)·eps of the terms' magnitude); half types allow for their 10/7-bit mantissas.
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-7),
    "float32": (1e-3, 1e-3),
    "float16": (1e-2, 1e-2),
    "bfloat16": (2e-2, 2e-2),
}


def default_cache_dir() -> Path:
    """Where builds and cached reference timings live (KFORGE_CACHE_DIR shares them between workers)."""
    return Path(os.environ.get("KFORGE_CACHE_DIR", Path.home() / ".cache" / "kforge"))


def default_memory_limit_mb() -> int:
    """Half of this machine's RAM, at least 8 GiB: KernelBench's get_inputs() builds inputs of several GB on
    the host before they move to the GPU, so a fixed 8 GiB killed real problems in harness code."""
    import os

    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20
    except (ValueError, OSError, AttributeError):
        total = 0
    return max(8192, total // 2)


@dataclass
class EvalSettings:
    n_trials: int = 3  # correctness input sets, each from its own seed
    seed: int = 42
    build_timeout_s: float = 600.0  # compiling the candidate (importing its module)
    run_timeout_s: float = 120.0  # everything after the build: correctness and timing
    memory_limit_mb: int = field(default_factory=lambda: default_memory_limit_mb())  # worker + children RSS
    output_limit_mb: int = 256  # largest file the worker may write (stdout floods, runaway builds)
    timing: bool = True
    compile_reference: bool = True  # also time torch.compile(Model)
    reuse_compiled_timing: bool = True  # torch.compile's timing of this problem on this device, measured once
    warmup: int = 3
    min_reps: int = 10
    max_reps: int = 200
    min_timing_s: float = 0.5  # per measured function
    threads: int | None = None  # CPU threads for torch and OpenMP; None: all cores
    tolerances: dict[str, tuple[float, float]] = field(default_factory=lambda: dict(DEFAULT_TOLERANCES))
    # "float64": outputs judged against a float64 run of the reference, allowance tied to the reference's own
    # rounding error plus the dtype's rtol (judging/error_model.py); "fixed": the atol/rtol of `tolerances` alone
    error_model: str = "float64"
    # Whose work may the speedup be (docs/anticheat.md, "Whose work"): "partial" (default, KernelBench's
    # practical default): the candidate's own kernels must replace part of the reference's work, library calls
    # may do the rest (fusion around cuBLAS/cuDNN); "all": its own kernels must also run at least
    # min_own_kernel_share of its device time (strict rejects below, lenient flags), a benchmark setting.
    kernel_policy: str = "partial"
    min_own_kernel_share: float = 0.5  # used by kernel_policy="all"
    strictness: str = "strict"  # anti-cheat rules: "strict", "lenient" or "off" (see static_checks.py)
    suspicious_speedup: float = 10.0  # speedups above this are flagged for review, not celebrated
    fast_build: bool = True  # lighter CUDA includes + precompiled torch/extension.h (fast_build.py)
    split_build: bool = True  # kernels apart from torch headers, host code on torch-lite (split_build.py)
    inputs_on_device: bool = True  # CUDA: get_inputs() runs with the GPU as default device (stages.py)
    cache_dir: str | None = None  # build cache (torch extensions); None: ~/.cache/kforge
    keep_workdir: bool = False
    progress_file: str | None = None  # the worker's current stage is written here as it goes (the app shows it)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "EvalSettings":
        known = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        if "tolerances" in known:
            known["tolerances"] = {k: tuple(v) for k, v in known["tolerances"].items()}
        return cls(**known)
