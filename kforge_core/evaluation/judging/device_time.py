"""Device time from a torch.profiler trace, counted once: the GPU activities (kernels, copies, memsets)
themselves, not the CPU operators whose device_time_total repeats their children's kernels.

Also the split that anti-cheat needs: which of that time ran in kernels the candidate wrote."""

from __future__ import annotations

import re
from collections import defaultdict

# The names a candidate gives its own kernels: CUDA __global__ functions and Triton @jit functions.
_CUDA_KERNEL = re.compile(r"__global__\s+[\w:<>,\s*&]*?\b(\w+)\s*\(")
_LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\([^)]*\)")
# Kernels of PyTorch and the vendor libraries, whatever the candidate names its own: a candidate that
# calls its dummy kernel "gemm" must not get cuBLAS's time counted as its own.
_LIBRARY = re.compile(r"\b(?:at|c10|cub|cudnn|cublas\w*|cutlass|thrust|flash)::|^(?:void\s+)?(?:nvjet|sm\d+_xmma|"
                      r"ampere_|volta_|turing_|hopper_|cudnn|cublas|cutlass|Memcpy|Memset)|^triton_(?:poi|red|per|tem)_")
_TRITON_KERNEL = re.compile(r"@triton\.jit[^\n]*\n(?:\s*@[^\n]*\n)*\s*def\s+(\w+)\s*\(")


def own_kernel_names(source: str) -> set[str]:
    """Kernels the candidate's source defines (names as written; a trace names them mangled or plain)."""
    return set(_CUDA_KERNEL.findall(_LAUNCH_BOUNDS.sub(" ", source))) | set(_TRITON_KERNEL.findall(source))


def is_own(trace_name: str, own: set[str]) -> bool:
    """Whether a traced kernel is one of `own`: plain (Triton, extern "C") or inside a C++ mangled or
    demangled name ("void add_kernel(float*, ...)", "_Z10add_kernelPfS_"), and not a library's kernel."""
    if _LIBRARY.search(trace_name):
        return False
    for name in own:
        if trace_name == name or re.search(rf"(?:^|[\s:*&]){re.escape(name)}(?:<|\(|$)", trace_name) \
                or re.search(rf"^_Z\d*N?\w*?{len(name)}{re.escape(name)}", trace_name):
            return True
    return False


def device_rows(prof) -> list[dict]:
    """Per GPU activity name: calls and total microseconds, largest first (empty on CPU-only traces)."""
    from torch.autograd import DeviceType

    total, calls = defaultdict(float), defaultdict(int)
    for e in prof.events():
        if e.device_type != DeviceType.CPU:
            total[e.name] += e.time_range.elapsed_us()
            calls[e.name] += 1
    return sorted(({"name": n, "calls": calls[n], "us": round(t, 2)} for n, t in total.items()),
                  key=lambda r: r["us"], reverse=True)


def cpu_op_rows(prof) -> list[dict]:
    """PyTorch operators by their own (self) CPU time, largest first."""
    rows = [{"name": e.key, "calls": e.count, "us": round(e.self_cpu_time_total, 2)}
            for e in prof.key_averages() if str(e.device_type).endswith("CPU")]
    return sorted(rows, key=lambda r: r["us"], reverse=True)


# Filling memory (torch::zeros_like, memsets) prepares an output; it computes nothing (a constant output
# fails correctness), so it counts on neither side.
_INITIALISATION = re.compile(r"FillFunctor|^Memset|\bfill_kernel|memset", re.I)


def own_share(rows: list[dict], own: set[str]) -> float | None:
    """Fraction of the device time spent in the candidate's own kernels (None: no device time at all)."""
    rows = [r for r in rows if not _INITIALISATION.search(r["name"])]
    all_us = sum(r["us"] for r in rows)
    if all_us <= 0:
        return None
    return sum(r["us"] for r in rows if is_own(r["name"], own)) / all_us


def cpu_own_share(op_rows: list[dict], wall_us: float) -> float | None:
    """CPU: the share of a forward's wall time spent outside PyTorch operators (in the candidate's
    extension and Python). Operators its C++ code calls through torch:: are recorded too, so a library
    call behind a token kernel counts as PyTorch's."""
    if wall_us <= 0:
        return None
    aten_us = sum(r["us"] for r in op_rows if r["name"].startswith("aten::"))
    return max(0.0, 1.0 - aten_us / wall_us)
