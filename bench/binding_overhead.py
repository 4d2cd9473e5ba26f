"""Per-call cost of the split build's thin binding (ctypes + torch's C handles) vs load_inline's pybind11
binding, on the same C++ function, side by side in one process: what a timed call pays on top of the kernel.

    python -m bench.binding_overhead [--calls N]

Runs on the CPU (a CPU tensor in, the same tensor out: no kernel at all), so the figure is the binding alone.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

SOURCE = r"""
#include <torch/extension.h>
torch::Tensor same(torch::Tensor x) { return x; }
torch::Tensor fresh(torch::Tensor x) { return torch::empty_like(x); }
"""


def per_call_us(fn, x, calls: int) -> float:
    for _ in range(1000):
        fn(x)
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(x)
        runs.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(runs)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20000)
    a = ap.parse_args()
    import torch
    from torch.utils.cpp_extension import load_inline

    from kforge_core.evaluation.building.split_build import SplitBuilder

    root = Path(tempfile.mkdtemp(prefix="kforge-binding-"))
    notes: list[str] = []
    split = SplitBuilder(root / "split", notes).build("kforge_binding_split", SOURCE, None, functions=["same", "fresh"])
    (root / "pybind").mkdir()
    pybind = load_inline("kforge_binding_pybind", SOURCE, functions=["same", "fresh"],
                         build_directory=str(root / "pybind"))
    x = torch.ones(16)
    print(f"torch {torch.__version__}, {a.calls} calls x 5 runs, median per call")
    print("| function | pybind11 (load_inline) us | thin binding (split build) us | thin / pybind11 |")
    print("| --- | --- | --- | --- |")
    for name in ("same", "fresh"):
        p, s = per_call_us(getattr(pybind, name), x, a.calls), per_call_us(getattr(split, name), x, a.calls)
        print(f"| {name} | {p:.2f} | {s:.2f} | {s / p:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
