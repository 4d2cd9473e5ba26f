"""The evaluation worker: runs in its own process, started by sandbox.py, never imported by the app.

    python -m kforge_core.evaluation.worker.main JOBDIR

JOBDIR/job.json says what to do; the worker appends JSON lines to JOBDIR/events.jsonl: a line per stage
reached, then one final line holding either {"result": ...} or {"problem_error": ...}. If the candidate
kills the process, the parent still knows the last stage (and whose code was running) from this file.

This module is only the entry point and its limits; the stages are in stages.py.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path

# Only the standard library until limits are applied: nothing heavy may run unbounded.
ADDRESS_SPACE_SLACK = 4 << 30  # torch and OpenMP reserve address space they never touch
PCH_FILE_LIMIT = 4 << 30  # a precompiled torch/extension.h is ~0.8 GB


class EventLog:
    def __init__(self, path: Path):
        self._f = open(path, "a", buffering=1)
        self.t0 = time.monotonic()
        self.stage_started: dict[str, float] = {}

    def write(self, obj: dict) -> None:
        self._f.write(json.dumps(obj) + "\n")
        self._f.flush()

    def stage(self, name: str) -> None:
        self.stage_started[name] = time.monotonic()
        self.write({"stage": name, "t": round(time.monotonic() - self.t0, 3)})

    def stage_seconds(self) -> dict[str, float]:
        names = list(self.stage_started)
        ends = [self.stage_started[n] for n in names[1:]] + [time.monotonic()]
        return {n: round(e - self.stage_started[n], 3) for n, e in zip(names, ends)}


def apply_limits(memory_limit_mb: int, output_limit_mb: int, address_space_limit: bool) -> None:
    if address_space_limit:
        lim = (memory_limit_mb << 20) + ADDRESS_SPACE_SLACK
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    out = output_limit_mb << 20
    # The hard limit leaves room for KForge's own precompiled header (fast_build.py raises its soft limit).
    resource.setrlimit(resource.RLIMIT_FSIZE, (out, max(out, PCH_FILE_LIMIT)))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def start_job(jobdir: Path) -> tuple[dict, EventLog]:
    """Read the job and bound the process before anything heavy (torch, the candidate) is loaded."""
    job = json.loads((jobdir / "job.json").read_text())
    s = job["settings"]
    apply_limits(s["memory_limit_mb"], s["output_limit_mb"], job["address_space_limit"])
    log = EventLog(jobdir / "events.jsonl")
    log.stage("start")
    return job, log


def main() -> int:
    jobdir = Path(sys.argv[1])
    job, log = start_job(jobdir)
    from kforge_core.evaluation.worker.stages import Evaluation, ProblemFailure

    try:
        result = Evaluation(job, jobdir, log).run()
    except ProblemFailure as e:
        log.write({"problem_error": str(e)})
        return 3
    result["stage_seconds"] = log.stage_seconds()
    result["stage"] = list(log.stage_started)[-1]
    log.write({"result": result})
    sys.stdout.flush()
    # Skip interpreter teardown: a candidate's atexit hooks or broken destructors cannot touch the result now.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
