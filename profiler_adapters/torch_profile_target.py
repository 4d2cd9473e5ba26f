"""Sandboxed torch.profiler run (started through kforge_core.evaluation.sandbox like the evaluator):
per-operator / per-kernel time of the candidate and of the reference, on any device.

    python -m profiler_adapters.torch_profile_target JOBDIR
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

TOP = 15


def _table(prof, device_type: str) -> list[dict]:
    rows = []
    for e in prof.key_averages():
        dev_us = getattr(e, "device_time_total", 0.0) or getattr(e, "cuda_time_total", 0.0) or 0.0
        rows.append({"name": e.key, "calls": e.count, "self_cpu_us": round(e.self_cpu_time_total, 2),
                     "device_us": round(dev_us, 2)})
    key = "device_us" if device_type == "cuda" else "self_cpu_us"
    rows.sort(key=lambda r: r[key], reverse=True)
    return rows[:TOP]


def main() -> int:
    from kforge_core.evaluation.worker import start_job

    jobdir = Path(sys.argv[1])
    job, log = start_job(jobdir)

    import torch
    from torch.profiler import ProfilerActivity, profile

    from kforge_core.evaluation.loading import seeded, to_device
    from kforge_core.evaluation.stages import Evaluation

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
        tables[side] = _table(prof, device.type)
    log.write({"result": {"device": device.type, "tables": tables, "reps": 5, "wall_us": wall_us}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
