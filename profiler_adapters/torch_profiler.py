"""torch.profiler: per-operator (CPU) or per-kernel (CUDA) time of candidate vs reference. The cheap
profile available everywhere, including CI on the CPU backend. Runs in the same sandbox as evaluation."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from kforge_core.backends import get_backend
from kforge_core.evaluation.evaluator import worker_env
from kforge_core.evaluation.isolation.sandbox import run_worker
from kforge_core.evaluation.settings import EvalSettings
from kforge_core.problems import Problem
from kforge_core.profile import Metric, ProfileReport


class ProfileFailed(Exception):
    pass


def report_from_tables(tables: dict, device: str, reps: int, wall_us: dict | None = None) -> ProfileReport:
    """Per forward: on a GPU the kernels' own time (each GPU activity once), on the CPU the operators'
    self time; each beside the forward's wall time, so what the profiler cannot see shows as the gap."""
    on_gpu = device == "cuda"
    key, what = ("kernels", "kernel_us") if on_gpu else ("ops", "op_us")
    metrics, rows = [], []
    for side in ("candidate", "reference"):
        t = tables.get(side) or {}
        per = max(reps, 1)
        items = [{"op": r["name"][:70], "us": r["us"] / per, "calls": r["calls"] / per} for r in t.get(key, [])]
        profiled = t.get(what, 0.0) / per
        metrics.append(Metric(f"{side}: {'GPU kernel' if on_gpu else 'CPU operator'} time per forward", profiled, "us",
                              "each GPU activity counted once" if on_gpu else "self time of PyTorch operators"))
        if on_gpu:
            metrics.append(Metric(f"{side}: CPU operator time per forward", t.get("op_us", 0.0) / per, "us",
                                  "host side: launches, allocations, Python-visible ops"))
        if on_gpu and t.get("own_share") is not None:
            metrics.append(Metric(f"{side}: own-kernel share of GPU time", 100 * t["own_share"], "%",
                                  "kernels the candidate's source defines, vs library and PyTorch kernels"))
        wall = (wall_us or {}).get(side)
        if wall is not None:
            metrics.append(Metric(f"{side}: forward wall time", wall, "us", "median of 5, outside the profiler"))
            if not on_gpu and wall > profiled:
                # custom C++ ops called through pybind are not PyTorch operators: the profiler cannot see them
                items.append({"op": "(custom kernels and Python, outside PyTorch ops)", "us": wall - profiled,
                              "calls": 1.0})
        total = sum(o["us"] for o in items) or 1.0
        rows += [{"side": side, "op": o["op"], "us_per_forward": round(o["us"], 2),
                  "calls_per_forward": round(o["calls"], 2), "share": f"{o['us'] / total:.0%}"}
                 for o in sorted(items, key=lambda o: o["us"], reverse=True)[:8]]
    return ProfileReport("torch.profiler", metrics=metrics, kernels=rows,
                         notes=[f"{reps} profiled forward passes each, after warm-up; device {device}"])


def profile(problem: Problem, candidate_source: str, backend: str = "cpu",
            settings: EvalSettings | None = None) -> ProfileReport:
    b = get_backend(backend)
    settings = settings or EvalSettings()
    jobdir = Path(tempfile.mkdtemp(prefix="kforge-torchprof-"))
    try:
        (jobdir / "candidate.py").write_text(candidate_source)
        (jobdir / "job.json").write_text(json.dumps({
            "problem": problem.to_dict(), "backend": b.name, "settings": settings.to_dict(),
            "address_space_limit": b.address_space_limit}))
        o = run_worker(jobdir, worker_env(b, settings, candidate_source), settings.build_timeout_s, settings.run_timeout_s,
                       settings.memory_limit_mb, module="profiler_adapters.torch_profile_target")
        result = o.final("result")
        if result is None:
            why = "timed out" if o.timed_out else f"exited with {o.returncode}"
            raise ProfileFailed(f"torch.profiler run {why} during {o.last_stage}: {o.stderr_tail.strip()[-600:]}")
        return report_from_tables(result["tables"], result["device"], result["reps"], result.get("wall_us"))
    finally:
        shutil.rmtree(jobdir, ignore_errors=True)
