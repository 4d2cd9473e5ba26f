"""Sandboxed torch.profiler run (started through kforge_core.evaluation.isolation.sandbox like the evaluator):
per-operator / per-kernel time of the candidate and of the reference, on any device.

    python -m profiler_adapters.torch_profile_target JOBDIR
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

TOP = 15


def _tables(prof) -> dict:
    """GPU activities (each counted once) and CPU operators (self time), kept apart: an operator's
    device_time_total repeats its kernels' time, so the two never go into one sum."""
    from kforge_core.evaluation.judging.device_time import cpu_op_rows, device_rows

    kernels, ops = device_rows(prof), cpu_op_rows(prof)
    return {"kernels": kernels[:TOP], "kernel_us": round(sum(r["us"] for r in kernels), 2),
            "ops": ops[:TOP], "op_us": round(sum(r["us"] for r in ops), 2)}


def main() -> int:
    from kforge_core.evaluation.worker.main import start_job

    jobdir = Path(sys.argv[1])
    job, log = start_job(jobdir)

    import torch
    from torch.profiler import ProfilerActivity, profile

    from kforge_core.evaluation.worker.loading import seeded, to_device
    from kforge_core.evaluation.worker.stages import Evaluation

    ev = Evaluation(job, jobdir, log)
    ref = ev.load_problem()
    log.stage("build")
    model_new = ev.build()
    log.stage("correctness")  # the run deadline applies from here
    seed = ev.settings.seed
    device = torch.device(ev.backend.device())
    init, inputs = ev.make_case(ref, seed)
    inputs = to_device(inputs, device)
    models = {"candidate": seeded(seed, lambda: model_new(*init)).to(device),
              "reference": ev.make_reference(ref, init, seed, device)}
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    tables, wall_us = {}, {}
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    for side, model in models.items():
        times = []
        for _ in range(5):  # wall time per forward, outside the profiler: custom ops are invisible to it
            t0 = time.perf_counter()
            model(*inputs)
            sync()
            times.append((time.perf_counter() - t0) * 1e6)
        wall_us[side] = sorted(times)[2]
        for _ in range(3):
            model(*inputs)
        if device.type == "cuda":
            torch.cuda.synchronize()
        with profile(activities=activities) as prof:
            for _ in range(5):
                model(*inputs)
            if device.type == "cuda":
                torch.cuda.synchronize()
        if side == "candidate":
            last_prof = prof
        tables[side] = _tables(prof)
    from kforge_core.evaluation.judging.device_time import device_rows, own_kernel_names, own_share

    tables["candidate"]["own_share"] = own_share(device_rows(last_prof), own_kernel_names(
        (jobdir / "candidate.py").read_text()))
    log.write({"result": {"device": device.type, "tables": tables, "reps": 5, "wall_us": wall_us}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
