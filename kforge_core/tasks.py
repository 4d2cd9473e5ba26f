"""The units of work an executor places on a machine: plain data in, plain data out, so the same
functions run in this process, in a local process pool or as Ray tasks on other nodes.

build_task needs CPU only; evaluate_task and profile_task need the accelerator the backend targets.
"""

from __future__ import annotations

from kforge_core.evaluation import EvalSettings
from kforge_core.evaluation import evaluator
from kforge_core.problems import Problem


def build_task(problem: dict, program: str, backend: str, settings: dict) -> dict | None:
    """Compile ahead of evaluation; a result dict when the build already decides the verdict."""
    r = evaluator.build(Problem.from_dict(problem), program, backend, EvalSettings.from_dict(settings))
    return r.to_dict() if r else None


def evaluate_task(problem: dict, program: str, backend: str, settings: dict) -> dict:
    return evaluator.evaluate(Problem.from_dict(problem), program, backend, EvalSettings.from_dict(settings)).to_dict()


def profile_task(problem: dict, program: str, backend: str, tool: str, settings: dict) -> dict:
    """Profile with `tool` ("ncu" or "torch"); ncu falls back to torch.profiler where it cannot run.

    Returns {"report": ProfileReport dict or None, "notes": [...], "ncu_csv": raw CSV or None}; a profiler
    failure is a note, never an exception (it must not cost the round)."""
    p, s = Problem.from_dict(problem), EvalSettings.from_dict(settings)
    notes, raw = [], None
    try:
        if tool == "ncu":
            from profiler_adapters.ncu import NcuUnavailable, profile

            try:
                report, raw = profile(p, program, backend, settings=s)
                return {"report": report.to_dict(), "notes": notes, "ncu_csv": raw}
            except NcuUnavailable as e:
                notes.append(f"ncu unavailable ({e}); torch.profiler used instead")
                tool = "torch"
        if tool == "torch":
            from profiler_adapters.torch_profiler import profile as torch_profile

            return {"report": torch_profile(p, program, backend, s).to_dict(), "notes": notes, "ncu_csv": None}
    except Exception as e:
        notes.append(f"profiling failed: {type(e).__name__}: {str(e)[:300]}")
    return {"report": None, "notes": notes, "ncu_csv": raw}
