"""Where evaluation work runs. A Session asks its executor to evaluate and profile; the executor decides
the placement:

- InlineExecutor: here (interactive runs: one candidate at a time, nothing to overlap);
- PoolExecutor: a local process pool of build workers (CPU) and one device worker per GPU;
- RayExecutor (kforge_core.ray_executor): Ray tasks, one GPU per evaluation, builds on CPU workers.

Pool and Ray split an evaluation in two: the build runs on a CPU worker and the GPU worker then finds it in
the source-keyed build cache, so compiles of some candidates overlap the evaluation of others.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

from kforge_core import tasks
from kforge_core.evaluation import EvalResult, EvalSettings
from kforge_core.problems import Problem
from kforge_core.profile import ProfileReport


class Executor:
    name = "inline"
    split_build = False  # build on a CPU worker before evaluating on a device worker

    def on_cpu(self, fn, *args):
        return fn(*args)

    def on_device(self, fn, *args):
        return fn(*args)

    def evaluate(self, problem: Problem, program: str, backend: str, settings: EvalSettings) -> EvalResult:
        args = (problem.to_dict(), program, backend, settings.to_dict())
        if self.split_build:
            decided = self.on_cpu(tasks.build_task, *args)
            if decided:
                return EvalResult.from_dict(decided)
        return EvalResult.from_dict(self.on_device(tasks.evaluate_task, *args))

    def profile(self, problem: Problem, program: str, backend: str, tool: str,
                settings: EvalSettings) -> tuple[ProfileReport | None, list[str], str | None]:
        out = self.on_device(tasks.profile_task, problem.to_dict(), program, backend, tool, settings.to_dict())
        report = ProfileReport.from_dict(out["report"]) if out["report"] else None
        return report, out["notes"], out["ncu_csv"]

    def describe(self) -> str:
        return "in this process"

    def close(self) -> None:
        pass


InlineExecutor = Executor


def gpu_count() -> int:
    """GPUs this machine has, asked without creating a CUDA context here (nvidia-smi)."""
    import subprocess

    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=20).stdout
        return len([line for line in out.splitlines() if line.strip()])
    except (OSError, subprocess.SubprocessError):
        return 0


def _claim_device(devices) -> None:
    # Pool initializer: each device worker process owns one GPU for its whole life (as a Ray GPU worker does).
    os.environ["CUDA_VISIBLE_DEVICES"] = devices.get()


def _hide_devices() -> None:
    os.environ["CUDA_VISIBLE_DEVICES"] = ""


class PoolExecutor(Executor):
    """Local process pools: `build_workers` CPU processes and one process per device slot.

    `devices` lists the GPU ids to use (one evaluation at a time on each). The CPU backend gets one slot (None)
    and no build workers: its timings must not share the cores with a build or another evaluation."""

    name = "pool"

    def __init__(self, devices: list[str | None], build_workers: int = 0):
        ctx = multiprocessing.get_context("spawn")  # no fork of a threaded parent
        self.devices = devices
        self.build_workers = build_workers
        self.split_build = build_workers > 0
        if all(d is None for d in devices):
            self._device_pool = ProcessPoolExecutor(len(devices), mp_context=ctx)
        else:
            q = ctx.Queue()
            for d in devices:
                q.put(str(d))
            self._device_pool = ProcessPoolExecutor(len(devices), mp_context=ctx, initializer=_claim_device,
                                                    initargs=(q,))
        self._build_pool = (ProcessPoolExecutor(build_workers, mp_context=ctx, initializer=_hide_devices)
                            if build_workers else None)

    @classmethod
    def for_backend(cls, backend: str, gpus: int | None = None, build_workers: int | None = None) -> "PoolExecutor":
        from kforge_core.backends import get_backend

        if get_backend(backend).device() == "cuda":
            n = gpus if gpus is not None else max(1, gpu_count())
            return cls([str(i) for i in range(n)], build_workers or max(1, (os.cpu_count() or 2) - n))
        return cls([None], 0)

    def on_cpu(self, fn, *args):
        return self._build_pool.submit(fn, *args).result()

    def on_device(self, fn, *args):
        return self._device_pool.submit(fn, *args).result()

    def describe(self) -> str:
        slots = ", ".join(f"GPU {d}" for d in self.devices if d is not None) or "1 CPU evaluation slot"
        return f"local process pool: {self.build_workers} build worker(s), {slots}"

    def close(self) -> None:
        self._device_pool.shutdown(cancel_futures=True)
        if self._build_pool:
            self._build_pool.shutdown(cancel_futures=True)

