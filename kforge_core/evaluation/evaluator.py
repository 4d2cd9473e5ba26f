"""evaluate(problem, candidate, backend, settings) -> EvalResult, the one entry point of evaluation."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

from kforge_core.backends import Backend, get_backend
from kforge_core.evaluation.judging import parent_clock
from kforge_core.evaluation.isolation import spare
from kforge_core.evaluation.result import EvalResult, Verdict
from kforge_core.evaluation.isolation.sandbox import ChildOutcome, run_worker
from kforge_core.evaluation.settings import EvalSettings, default_cache_dir
from kforge_core.evaluation.judging.static_checks import check_source
from kforge_core.problems import Problem, ProblemError


def _signal_name(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def _result_from_outcome(o: ChildOutcome, problem: Problem, backend: Backend, s: EvalSettings) -> EvalResult:
    problem_error = o.final("problem_error")
    if problem_error:
        raise ProblemError(problem_error)
    base = dict(problem=problem.name, backend=backend.name, stdout_tail=o.stdout_tail, stderr_tail=o.stderr_tail,
                duration_s=round(o.wall_s, 3), stage=o.last_stage)
    final = o.final("result")
    if final is not None and not o.timed_out and not o.memory_exceeded_mb:
        r = EvalResult.from_dict({**final, **base, "stage": final.get("stage", o.last_stage)})
        if s.strictness != "off" and r.timings and not r.interpreted:
            r = parent_clock.judge(r, o.wall_blocks, backend.device())
        return r
    stage = o.last_stage
    tail = _stderr_tail(o)
    in_harness = o.last_region == "harness"
    if o.timed_out:
        limit = (max(s.run_timeout_s, o.final("run_timeout_s") or 0) if o.timed_out in ("correctness", "timing")
                 else s.build_timeout_s)
        if in_harness:
            return EvalResult(Verdict.HARNESS_ERROR, [f"the harness's own code ran past the {limit:g} s limit during "
                                                      f"{stage} (not the candidate's code)", *tail], **base)
        return EvalResult(Verdict.TIMEOUT, [f"killed after exceeding the {limit:g} s limit during {stage}"], **base)
    if o.memory_exceeded_mb:
        what = (f"resident memory reached {o.memory_exceeded_mb:.0f} MB (limit {s.memory_limit_mb} MB, "
                f"--memory-mb) during {stage}")
        if in_harness:
            return EvalResult(Verdict.HARNESS_ERROR, [f"the worker was killed while the harness's own code ran: {what}"
                                                      f" (the problem's inputs and outputs may need a higher limit)"],
                              **base)
        return EvalResult(Verdict.RUNTIME_ERROR, [f"killed: {what}"], **base)
    rc = o.returncode
    if stage == "load_problem" and in_harness:
        # the worker imports the problem file in this stage and nothing else: its own code ended the process
        how = f"signal {_signal_name(rc)}" if rc is not None and rc < 0 else f"exit code {rc}"
        raise ProblemError(f"{problem.path}: importing the problem ended the process ({how}) before anything of the "
                           "candidate ran: the problem file itself is broken" + (f" ({tail[0]})" if tail else ""))
    if rc is not None and rc < 0:
        name = _signal_name(rc)
        why = {"SIGSEGV": "segmentation fault", "SIGBUS": "bus error", "SIGABRT": "aborted",
               "SIGFPE": "arithmetic exception", "SIGILL": "illegal instruction",
               "SIGXFSZ": f"wrote a file larger than the {s.output_limit_mb} MB output limit",
               "SIGKILL": "killed"}.get(name, "killed by a signal")
        if in_harness:
            return EvalResult(Verdict.HARNESS_ERROR, [f"the worker died ({name}: {why}) in the harness's own code "
                                                      f"during {stage}, not in the candidate's", *tail], **base)
        return EvalResult(Verdict.RUNTIME_ERROR, [f"the program crashed ({name}: {why}) during {stage}", *tail],
                          **base)
    verdict = Verdict.HARNESS_ERROR if in_harness or not o.last_region else Verdict.RUNTIME_ERROR
    whose = "in the harness's own code " if verdict == Verdict.HARNESS_ERROR else ""
    return EvalResult(verdict, [f"the worker exited with code {rc} {whose}during {stage} without a result", *tail],
                      **base)


def _stderr_tail(o: ChildOutcome, lines: int = 8) -> list[str]:
    """The last lines of the worker's stderr, as one message (empty when it wrote nothing)."""
    text = (o.stderr_tail or "").strip()
    return ["stderr: " + "\n".join(text.splitlines()[-lines:])] if text else []


def worker_env(backend: Backend, settings: EvalSettings, candidate_source: str | None) -> dict[str, str]:
    """Environment of a worker that builds or runs `candidate_source`.

    Extensions are built in a folder named after the source's hash: the same source is a cache hit in any
    later process (a build worker, then the evaluation, then the profiler), and two different programs
    that pick the same extension name never overwrite each other's build, even when built concurrently.
    """
    cache = Path(settings.cache_dir) if settings.cache_dir else default_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    env = {"OMP_NUM_THREADS": str(settings.threads or os.cpu_count() or 1), **backend.child_env(cache)}
    if backend.device() == "cuda":
        env[spare.GPU_WORKER_VAR] = "1"  # served by a spare that made its CUDA context ahead
    if "TORCH_EXTENSIONS_DIR" in env and candidate_source is not None:
        digest = hashlib.sha256(candidate_source.encode()).hexdigest()[:20]
        env["TORCH_EXTENSIONS_DIR"] = str(Path(env["TORCH_EXTENSIONS_DIR"]) / digest)
    return env


def _progress_writer(path: Path):
    """Writes where the worker is (stage, seconds into it, correctness trial k of n) each time it logs."""
    started = time.time()
    current = {"stage": "start", "since": started}

    def write(events: list[dict]) -> None:
        stage = next((e["stage"] for e in reversed(events) if "stage" in e), "start")
        trial = next((e for e in reversed(events) if "trial" in e), None)
        if stage != current["stage"]:
            current.update(stage=stage, since=time.time())
        now = {"stage": stage, "evaluation_started": started, "stage_started": current["since"]}
        if trial and stage == "correctness":
            now.update(trial=trial["trial"], of=trial["of"])
        try:
            tmp = path.with_name(f".{path.name}.{os.getpid()}")
            tmp.write_text(json.dumps(now))
            os.replace(tmp, path)
        except OSError:
            pass  # progress is a courtesy: never a reason to fail an evaluation

    return write


def _run(problem: Problem, candidate_source: str | None, backend: Backend, settings: EvalSettings,
         mode: str = "evaluate") -> ChildOutcome:
    jobdir = Path(tempfile.mkdtemp(prefix="kforge-eval-"))
    try:
        if candidate_source is not None:
            (jobdir / "candidate.py").write_text(candidate_source)
        job = {"problem": problem.to_dict(), "backend": backend.name, "settings": settings.to_dict(),
               "address_space_limit": backend.address_space_limit, "mode": mode,
               "reference_only": candidate_source is None}
        (jobdir / "job.json").write_text(json.dumps(job))
        env = worker_env(backend, settings, candidate_source)
        if mode == "build":
            env["CUDA_VISIBLE_DEVICES"] = ""  # a build worker never holds a GPU
            env[spare.GPU_WORKER_VAR] = "0"
        progress = _progress_writer(Path(settings.progress_file)) if settings.progress_file else None
        return run_worker(jobdir, env, settings.build_timeout_s, settings.run_timeout_s, settings.memory_limit_mb,
                          on_events=progress)
    finally:
        if not settings.keep_workdir:
            shutil.rmtree(jobdir, ignore_errors=True)


def evaluate(problem: Problem, candidate_source: str, backend: Backend | str,
             settings: EvalSettings | None = None) -> EvalResult:
    """Build, check and time a candidate in an isolated process. Raises ProblemError only when the
    problem itself is broken; every failure of the candidate comes back as a verdict."""
    backend = get_backend(backend) if isinstance(backend, str) else backend
    settings = settings or EvalSettings()
    t0 = time.monotonic()
    finding = check_source(candidate_source, backend, settings.strictness)
    if finding:
        return EvalResult(finding.verdict, [finding.message], problem=problem.name, backend=backend.name,
                          stage="static_checks", duration_s=round(time.monotonic() - t0, 3))
    available = backend.available()
    if not available.ok:
        return EvalResult(Verdict.RUNTIME_ERROR, [f"backend {backend.name} is not available here: "
                                                  f"{available.reason}"], problem=problem.name, backend=backend.name)
    return _result_from_outcome(_run(problem, candidate_source, backend, settings), problem, backend, settings)


def build(problem: Problem, candidate_source: str, backend: Backend | str,
          settings: EvalSettings | None = None) -> EvalResult | None:
    """Compile a candidate ahead of its evaluation, in an isolated process that holds no GPU, so builds
    can run on CPU workers while GPUs evaluate other candidates. Returns the verdict when the build
    decides it (static rejection, compile error, build timeout) and None when the candidate must go on to
    evaluate(), which then finds the build in the cache."""
    backend = get_backend(backend) if isinstance(backend, str) else backend
    settings = settings or EvalSettings()
    finding = check_source(candidate_source, backend, settings.strictness)
    if finding:
        return EvalResult(finding.verdict, [finding.message], problem=problem.name, backend=backend.name,
                          stage="static_checks")
    if not backend.builds_ahead:
        return None  # nothing to build ahead (Triton compiles on first launch, for the GPU it runs on)
    o = _run(problem, candidate_source, backend, settings, mode="build")
    final = o.final("result")
    if (final and final.get("verdict") in ("compile_error", "static_rejected")) or o.timed_out:
        return _result_from_outcome(o, problem, backend, settings)
    return None  # built, or a failure that only the real evaluation can judge (it will meet it again)


def reference_run(problem: Problem, backend: Backend, settings: EvalSettings) -> EvalResult:
    """Run the problem's reference alone on `backend` (isolated): whether it runs, its peak device memory, and
    with settings.timing its eager / torch.compile times. Raises ProblemError when the problem is broken."""
    return _result_from_outcome(_run(problem, None, backend, settings), problem, backend, settings)


def check_problem(problem: Problem, settings: EvalSettings | None = None) -> None:
    """Run the problem's own code once (isolated): raise ProblemError naming the file and the cause."""
    settings = settings or EvalSettings(timing=False)
    o = _run(problem, None, get_backend("cpu"), settings)
    if o.final("problem_error"):
        raise ProblemError(o.final("problem_error"))
    if o.final("result") is None:
        r = _result_from_outcome(o, problem, get_backend("cpu"), settings)
        raise ProblemError(f"{problem.path}: running the problem failed: {r.messages[0]}")
