"""Evaluation throughput of the batch executor: candidates evaluated per minute on 1 and on 2 GPUs, with
builds on CPU workers overlapping the GPU work, and each GPU's busy fraction (nvidia-smi utilization.gpu
sampled every 200 ms while the phase runs).

    python -m bench.throughput OUT_DIR [--variants N] [--gpus 1,2] [--phases warm,cold]

Candidates are the shipped CUDA examples, each in N variants (a comment and the extension name differ),
so every variant is a source no cache has seen: as in a real bench, where each model answer is new.

- warm: the variants were built beforehand (that prebuild is timed too: builds per minute on the CPU
  workers); each GPU count then evaluates all of them. Measures the GPU side.
- cold: fresh variants per GPU count, built and evaluated through the executor: builds overlap
  evaluations. Measures the whole pipeline.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kforge_core import tasks
from kforge_core.backends import get_backend
from kforge_core.evaluation import EvalSettings
from kforge_core.executors import PoolExecutor, gpu_count
from kforge_core.problems import resolve_problem

SETTINGS = EvalSettings()  # the full verdict: 3 trials, anti-cheat checks, eager + torch.compile timings


def variants(tag: str, n: int) -> list[tuple[object, str]]:
    cuda = get_backend("cuda")
    out = []
    for name in cuda.example_problems():
        src = cuda.example_for(name).read_text()
        problem = resolve_problem(name)
        for k in range(n):
            v = src.replace('name="kforge_cuda_', f'name="kforge_tp_{tag}{k}_', 1)
            v = v.replace("#include <torch/extension.h>", f"#include <torch/extension.h>\n// variant {tag}{k}", 1)
            assert v != src, name
            out.append((problem, v))
    return out


class GpuSampler:
    """nvidia-smi utilization.gpu per GPU, every 200 ms, while running."""

    def __init__(self):
        self.samples: dict[str, list[float]] = {}
        self._proc = None
        self._thread = None

    def __enter__(self):
        self._proc = subprocess.Popen(["nvidia-smi", "--query-gpu=index,utilization.gpu", "--format=csv,noheader,nounits",
                                       "-lms", "200"], stdout=subprocess.PIPE, text=True)
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        return self

    def _read(self):
        for line in self._proc.stdout:
            parts = [p.strip() for p in line.split(",")]
            if len(parts) == 2 and parts[1].replace(".", "").isdigit():
                self.samples.setdefault(parts[0], []).append(float(parts[1]))

    def __exit__(self, *exc):
        self._proc.terminate()
        self._proc.wait()

    def busy(self, gpus: int) -> list[float]:
        return [round(statistics.fmean(self.samples.get(str(i), [0])) / 100, 3) for i in range(gpus)]


def run_phase(executor: PoolExecutor, cands, build_first: bool) -> dict:
    def one(c):
        problem, src = c
        t0 = time.monotonic()
        r = executor.evaluate(problem, src, "cuda", SETTINGS)
        return r.verdict.value, time.monotonic() - t0, r.duration_s

    with GpuSampler() as gs, ThreadPoolExecutor(len(cands)) as drivers:
        t0 = time.monotonic()
        results = list(drivers.map(one, cands))
        wall = time.monotonic() - t0
    verdicts = [v for v, _, _ in results]
    return {"candidates": len(cands), "wall_s": round(wall, 1),
            "evaluations_per_minute": round(len(cands) / wall * 60, 2),
            "correct": verdicts.count("correct"), "verdicts": sorted(set(verdicts)),
            "gpu_busy_fraction": gs.busy(len(executor.devices)),
            "median_device_evaluation_s": round(statistics.median(d for _, _, d in results), 2)}


def prebuild(executor: PoolExecutor, cands) -> dict:
    def one(c):
        problem, src = c
        return executor.on_cpu(tasks.build_task, problem.to_dict(), src, "cuda", SETTINGS.to_dict())

    t0 = time.monotonic()
    with ThreadPoolExecutor(len(cands)) as t:
        decided = list(t.map(one, cands))
    wall = time.monotonic() - t0
    return {"builds": len(cands), "wall_s": round(wall, 1), "builds_per_minute": round(len(cands) / wall * 60, 2),
            "failed": sum(1 for d in decided if d)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--variants", type=int, default=2)
    ap.add_argument("--gpus", default="1,2")
    ap.add_argument("--phases", default="warm,cold")
    ap.add_argument("--build-workers", type=int)
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    counts = [int(g) for g in a.gpus.split(",") if int(g) <= gpu_count()]
    rows = []

    def emit(row):
        rows.append(row)
        print(json.dumps(row), flush=True)
        (out / "throughput.json").write_text(json.dumps(rows, indent=1))

    # torch.compile of each problem's reference is timed once per machine and then reused: do that first, so
    # no measured phase pays for it (the first phase would otherwise look slower than the second).
    ex = PoolExecutor.for_backend("cuda", max(counts), a.build_workers)
    originals = [(resolve_problem(n), get_backend("cuda").example_for(n).read_text())
                 for n in get_backend("cuda").example_problems()]
    emit({"phase": "baseline warm-up (not a measurement)", "gpus": max(counts), **run_phase(ex, originals, True)})
    ex.close()
    if "warm" in a.phases:
        cands = variants("w", a.variants)
        ex = PoolExecutor.for_backend("cuda", max(counts), a.build_workers)
        emit({"phase": "prebuild (CPU workers only)", "build_workers": ex.build_workers, **prebuild(ex, cands)})
        ex.close()
        for g in counts:
            ex = PoolExecutor.for_backend("cuda", g, a.build_workers)
            emit({"phase": "warm", "gpus": g, **run_phase(ex, cands, False)})
            ex.close()
    if "cold" in a.phases:
        for g in counts:
            ex = PoolExecutor.for_backend("cuda", g, a.build_workers)
            emit({"phase": "cold (builds overlapped)", "gpus": g, "build_workers": ex.build_workers,
                  **run_phase(ex, variants(f"c{g}_", a.variants), True)})
            ex.close()

    print("\n| phase | GPUs | candidates | wall (s) | evaluations / min | GPU busy fraction |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        if "gpus" in r and "warm-up" not in r["phase"]:
            print(f"| {r['phase']} | {r['gpus']} | {r['candidates']} | {r['wall_s']} | {r['evaluations_per_minute']} | "
                  f"{', '.join(f'{b:.0%}' for b in r['gpu_busy_fraction'])} |")
    for phase in ("warm", "cold (builds overlapped)"):
        by = {r["gpus"]: r for r in rows if r["phase"] == phase}
        if 1 in by and 2 in by:
            print(f"{phase}: 2 GPUs / 1 GPU throughput = "
                  f"{by[2]['evaluations_per_minute'] / by[1]['evaluations_per_minute']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
