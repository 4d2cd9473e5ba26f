"""One timing protocol for reference, torch.compile and candidate: warm-up, then repetitions interleaved
across the functions (so drift in clocks or load hits all of them alike), median with quartiles."""

from __future__ import annotations

import statistics
import time
from typing import Callable

from kforge_core.evaluation.result import TimingStats


def _stats(samples_ms: list[float]) -> TimingStats:
    s = sorted(samples_ms)
    q = statistics.quantiles(s, n=4) if len(s) >= 2 else [s[0], s[0], s[0]]
    return TimingStats(median_ms=statistics.median(s), q1_ms=q[0], q3_ms=q[2], min_ms=s[0], max_ms=s[-1],
                       mean_ms=statistics.fmean(s), std_ms=statistics.pstdev(s) if len(s) > 1 else 0.0, reps=len(s))


class CpuClock:
    """Wall clock around a synchronous call."""

    def time_once(self, fn: Callable[[], object]) -> float:
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e3


def measure(fns: dict[str, Callable[[], object]], clock, warmup: int, min_reps: int, max_reps: int,
            min_time_s: float) -> dict[str, TimingStats]:
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    spent = 0.0
    while True:
        for name, fn in fns.items():
            ms = clock.time_once(fn)
            samples[name].append(ms)
            spent += ms / 1e3
        reps = len(next(iter(samples.values())))
        if reps >= max_reps or (reps >= min_reps and spent >= min_time_s * len(fns)):
            break
    return {name: _stats(s) for name, s in samples.items()}


class CudaClock:
    """CUDA events around the call, L2 flushed before each rep, the whole device synchronised after each
    rep (so no stream's work leaks into the next). The flush is queued right before the start event: the
    GPU is busy with it while the host launches the call, so host launch latency is not billed to kernels
    that the GPU runs back to back (as it would be in a real model)."""

    def __init__(self):
        import torch

        self.torch = torch
        l2 = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "L2_cache_size", 64 << 20)
        self.flush_buf = torch.empty(max(2 * l2, 64 << 20) // 4, dtype=torch.int32, device="cuda")
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def time_once(self, fn: Callable[[], object]) -> float:
        self.flush_buf.zero_()
        self.start.record()
        fn()
        self.end.record()
        self.torch.cuda.synchronize()
        return self.start.elapsed_time(self.end)


class MpsClock:
    """Apple GPUs: wall clock between full device synchronisations."""

    def __init__(self):
        import torch

        self.torch = torch

    def time_once(self, fn: Callable[[], object]) -> float:
        self.torch.mps.synchronize()
        t0 = time.perf_counter()
        fn()
        self.torch.mps.synchronize()
        return (time.perf_counter() - t0) * 1e3


def make_clock(device_type: str):
    return {"cuda": CudaClock, "mps": MpsClock}.get(device_type, CpuClock)()
