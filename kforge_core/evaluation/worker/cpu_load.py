"""How busy the CPU is with work that is not ours, from /proc/stat (Linux): the CPU backend's timings are
only true when the timing threads have the cores to themselves. On a 2-core machine with two other busy
processes, ATen's and the candidate's OpenMP threads wait for time slices, and the same kernel's time jumps
between levels ~60x apart from one evaluation to the next (issue 17)."""

from __future__ import annotations

import os
import time

TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
UNSTABLE_CORES = 0.5  # other work using more than half a core on average while timing: not trustworthy


def _system_busy_ticks() -> tuple[int, int] | None:
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def _own_ticks() -> float:
    t = os.times()
    return (t.user + t.system + t.children_user + t.children_system) * TICKS


class LoadWindow:
    """Average number of cores kept busy by other processes between start() and stop()."""

    def __init__(self):
        self.start()

    def start(self) -> None:
        self._sys, self._own, self._t = _system_busy_ticks(), _own_ticks(), time.monotonic()

    def others_busy_cores(self) -> float | None:
        now = _system_busy_ticks()
        if now is None or self._sys is None:
            return None
        busy, total = now[0] - self._sys[0], now[1] - self._sys[1]
        if total <= 0:
            return 0.0
        ncpu = os.cpu_count() or 1
        others = max(0.0, busy - (_own_ticks() - self._own))
        return ncpu * others / total


def others_busy_now(window_s: float = 0.25) -> float | None:
    w = LoadWindow()
    time.sleep(window_s)
    return w.others_busy_cores()


def free_cores(busy: float | None) -> int:
    ncpu = os.cpu_count() or 1
    return ncpu if busy is None else max(1, ncpu - round(busy))
