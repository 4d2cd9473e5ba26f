"""One timing protocol for reference, torch.compile and candidate: warm-up, then repetitions interleaved
across the functions (so drift in clocks or load hits all of them alike), median with quartiles."""

from __future__ import annotations

import statistics
import time
from typing import Callable

from kforge_core.evaluation.result import TimingStats

_now = time.perf_counter  # bound at import, before any candidate code: patching time.perf_counter cannot reach it


def _stats(samples_ms: list[float]) -> TimingStats:
    s = sorted(samples_ms)
    q = statistics.quantiles(s, n=4) if len(s) >= 2 else [s[0], s[0], s[0]]
    return TimingStats(median_ms=statistics.median(s), q1_ms=q[0], q3_ms=q[2], min_ms=s[0], max_ms=s[-1],
                       mean_ms=statistics.fmean(s), std_ms=statistics.pstdev(s) if len(s) > 1 else 0.0, reps=len(s))


class CpuClock:
    """Wall clock around a synchronous call."""

    def time_once(self, fn: Callable[[], object]) -> float:
        t0 = _now()
        fn()
        return (_now() - t0) * 1e3


def measure(fns: dict[str, Callable[[], object]], clock, warmup: int, min_reps: int, max_reps: int,
            min_time_s: float) -> dict[str, TimingStats]:
    for fn in fns.values():
        for _ in range(warmup):
            fn()
        if hasattr(clock, "prepare"):
            clock.prepare(fn)
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
    stats = {name: _stats(s) for name, s in samples.items()}
    for name, fn in fns.items():
        stats[name].host_ms = getattr(clock, "host_ms", {}).get(id(fn))
    return stats


class CudaClock:
    """CUDA events around the call, L2 flushed before each rep, the whole device synchronised after each
    rep (so no stream's work leaks into the next).

    Each rep starts from an idle GPU, so without care the events would also time the host's launch path
    (Python, the extension call, allocations: tens of µs, more than a short kernel runs). So before the start
    event the GPU gets a head start: the flush, then a spin kernel long enough to cover the host's launch
    time of this function (measured during warm-up). The kernels then run back to back, as in a real model,
    and the events time the GPU's work."""

    MAX_HEAD_START_MS = 5.0

    def __init__(self):
        import torch

        self.torch = torch
        self.host_ms: dict[int, float] = {}
        l2 = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "L2_cache_size", 64 << 20)
        self.flush_buf = torch.empty(max(2 * l2, 64 << 20) // 4, dtype=torch.int32, device="cuda")
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)
        self.cycles_per_ms = self._spin_rate()
        self.head_start_ms: dict[int, float] = {}

    def _spin_rate(self) -> float:
        torch = self.torch
        torch.cuda._sleep(1000)  # load the spin kernel
        torch.cuda.synchronize()
        self.start.record()
        torch.cuda._sleep(2_000_000)
        self.end.record()
        torch.cuda.synchronize()
        return 2_000_000 / max(self.start.elapsed_time(self.end), 1e-3)

    def prepare(self, fn: Callable[[], object]) -> None:
        """Measure the host's launch time of `fn` (no sync): the head start it needs."""
        host = []
        for _ in range(5):
            self.torch.cuda.synchronize()
            t0 = _now()
            fn()
            host.append((_now() - t0) * 1e3)
        self.torch.cuda.synchronize()
        self.host_ms[id(fn)] = statistics.median(host)
        self.head_start_ms[id(fn)] = min(2 * statistics.median(host) + 0.02, self.MAX_HEAD_START_MS)
        idle = []
        for _ in range(5):
            t0 = _now()
            self.torch.cuda.synchronize()
            idle.append((_now() - t0) * 1e3)
        self.idle_sync_ms = max(idle)

    def time_once(self, fn: Callable[[], object]) -> float:
        self.flush_buf.zero_()
        head = self.head_start_ms.get(id(fn))
        if head:
            self.torch.cuda._sleep(int(head * self.cycles_per_ms))
        self.start.record()
        fn()
        self.end.record()
        self.end.synchronize()
        # Work the call left on other streams is still running when the timed stream's end event completes:
        # the device-wide wait that follows is timed too, and what it takes beyond an idle wait is added.
        t0 = _now()
        self.torch.cuda.synchronize()
        tail = (_now() - t0) * 1e3 - getattr(self, "idle_sync_ms", 0.0)
        return self.start.elapsed_time(self.end) + max(tail, 0.0)


class MpsClock:
    """Apple GPUs: wall clock between full device synchronisations."""

    def __init__(self):
        import torch

        self.torch = torch

    def time_once(self, fn: Callable[[], object]) -> float:
        self.torch.mps.synchronize()
        t0 = _now()
        fn()
        self.torch.mps.synchronize()
        return (_now() - t0) * 1e3


def make_clock(device_type: str):
    return {"cuda": CudaClock, "mps": MpsClock}.get(device_type, CpuClock)()
