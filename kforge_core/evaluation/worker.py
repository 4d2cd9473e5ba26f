"""The evaluation worker: runs in its own process, started by sandbox.py, never imported by the app.

    python -m kforge_core.evaluation.worker JOBDIR

JOBDIR/job.json says what to do; the worker appends JSON lines to JOBDIR/events.jsonl: a line per stage
reached, then one final line holding either {"result": ...} or {"problem_error": ...}. If the candidate
kills the process, the parent still knows the last stage from this file.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import sys
import time
import traceback
from pathlib import Path

# Only the standard library until limits are applied: nothing heavy may run unbounded.
ADDRESS_SPACE_SLACK = 4 << 30  # torch and OpenMP reserve address space they never touch
PCH_FILE_LIMIT = 4 << 30  # a precompiled torch/extension.h is ~0.8 GB


class ProblemFailure(Exception):
    """The reference problem itself is broken (not the candidate's fault)."""


class Outcome(Exception):
    """Stop evaluating with this verdict."""

    def __init__(self, verdict: str, *messages: str, build_log: str = ""):
        super().__init__(messages[0] if messages else verdict)
        self.verdict, self.messages, self.build_log = verdict, list(messages), build_log


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


def describe_exception(e: BaseException, filename: str) -> str:
    """'Type: message (candidate.py:12 in forward)', locating the deepest frame in `filename`."""
    msg = str(e).strip()
    if len(msg) > 1500:
        msg = msg[:1500] + " ..."
    where = ""
    for frame in reversed(traceback.extract_tb(e.__traceback__)):
        if frame.filename == filename:
            where = f" ({Path(filename).name}:{frame.lineno} in {frame.name})"
            break
    if isinstance(e, OSError) and e.errno == errno.EFBIG:
        where += " [the worker's output limit was reached: a stdout flood or a runaway file]"
    return f"{type(e).__name__}: {msg}{where}"


def load_source_module(source: str, filename: str, module_name: str, register: bool = True):
    import types

    mod = types.ModuleType(module_name)
    mod.__file__ = filename
    if register:
        sys.modules[module_name] = mod
    exec(compile(source, filename, "exec"), mod.__dict__)
    return mod


def _all_same(a: list, b: list) -> bool:
    from kforge_core.evaluation.anticheat import _same

    return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))


def _seeded(seed: int, fn):
    import torch

    torch.manual_seed(seed)
    return fn()


def _to_device(obj, device):
    import torch

    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_device(o, device) for o in obj)
    return obj


def _clone(obj):
    import torch

    if isinstance(obj, torch.Tensor):
        return obj.clone()
    if isinstance(obj, (list, tuple)):
        return type(obj)(_clone(o) for o in obj)
    return obj


def environment(device: str) -> dict:
    import platform

    import torch

    env = {"torch": torch.__version__, "python": platform.python_version(), "platform": platform.platform(),
           "device": device, "threads": torch.get_num_threads(),
           "spare_worker": os.environ.get("KFORGE_SPARE_WORKER") == "1"}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                env["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        env["cpu"] = platform.processor()
    if device == "cuda":
        env.update(gpu_environment())
    return env


def gpu_environment() -> dict:
    """GPU name, capability, CUDA versions, and driver / clocks where nvidia-smi can read them."""
    import subprocess

    import torch

    p = torch.cuda.get_device_properties(0)
    env = {"gpu": p.name, "capability": "%d.%d" % (p.major, p.minor), "sm_count": p.multi_processor_count,
           "cuda_runtime": torch.version.cuda, "triton": _version("triton")}
    fields = "driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit"
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=20).stdout.splitlines()
        if out:
            for k, v in zip(fields.split(","), out[0].split(",")):
                env[k.replace(".", "_")] = v.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return env


def _version(module: str) -> str | None:
    try:
        return __import__(module).__version__
    except Exception:
        return None


class Evaluation:
    def timed(self, name: str):
        """Add the time spent in a block to detail_seconds (where a verdict's seconds go)."""
        import contextlib

        @contextlib.contextmanager
        def block():
            t0 = time.monotonic()
            try:
                yield
            finally:
                self.detail_seconds[name] = round(self.detail_seconds.get(name, 0.0) + time.monotonic() - t0, 3)

        return block()

    def __init__(self, job: dict, jobdir: Path, log: EventLog):
        from kforge_core.backends import get_backend
        from kforge_core.evaluation.settings import EvalSettings

        self.job, self.jobdir, self.log = job, jobdir, log
        self.settings = EvalSettings.from_dict(job["settings"])
        self.backend = get_backend(job["backend"])
        self.problem = job["problem"]
        self.candidate_path = str(jobdir / "candidate.py")
        self.detail_seconds: dict[str, float] = {}
        self.build_notes: list[str] = []
        from kforge_core.evaluation.evaluator import default_cache_dir

        self.cache_dir = Path(self.settings.cache_dir) if self.settings.cache_dir else default_cache_dir()

    # -- stages ---------------------------------------------------------------------------------------
    def load_problem(self):
        self.log.stage("load_problem")
        path = self.problem["path"]
        try:
            ref = load_source_module(self.problem["source"], path, "kforge_reference", register=False)
        except Exception as e:
            raise ProblemFailure(f"{path}: importing the problem failed: {describe_exception(e, path)}")
        for name in ("Model", "get_inputs", "get_init_inputs"):
            if not callable(getattr(ref, name, None)):
                raise ProblemFailure(f"{path}: `{name}` is missing or not callable")
        return ref

    def make_case(self, ref, seed: int):
        """Inputs and init args of one trial, from the problem's own functions under `seed`."""
        path = self.problem["path"]
        for fn in ("get_init_inputs", "get_inputs"):
            try:
                value = _seeded(seed, getattr(ref, fn))
            except Exception as e:
                raise ProblemFailure(f"{path}: {fn}() raised {describe_exception(e, path)}")
            if not isinstance(value, (list, tuple)):
                raise ProblemFailure(f"{path}: {fn}() must return a list, got {type(value).__name__}")
            if fn == "get_init_inputs":
                init = value
        return init, value

    def make_reference(self, ref, init, seed: int, device):
        try:
            return _seeded(seed, lambda: ref.Model(*init)).to(device)
        except Exception as e:
            path = self.problem["path"]
            raise ProblemFailure(f"{path}: Model(*get_init_inputs()) raised {describe_exception(e, path)}")

    def run_reference(self, model, inputs):
        from kforge_core.evaluation.correctness import check_reference_outputs

        path = self.problem["path"]
        try:
            out = model(*inputs)
        except Exception as e:
            raise ProblemFailure(f"{path}: Model.forward raised {describe_exception(e, path)}")
        bad = check_reference_outputs(out)
        if bad:
            raise ProblemFailure(f"{path}: {bad}")
        return out

    def build(self):
        from kforge_core.evaluation.build_errors import first_compiler_error, trim_log

        self.log.stage("build")
        source = Path(self.candidate_path).read_text()
        fast = self.install_fast_build()
        t0 = time.monotonic()
        try:
            mod = load_source_module(source, self.candidate_path, "kforge_candidate")
        except SyntaxError as e:
            raise Outcome("compile_error", f"candidate.py:{e.lineno}: SyntaxError: {e.msg}")
        except Exception as e:
            text = str(e)
            if "Error building extension" in text or "error:" in text and "ninja" in text.lower():
                err = first_compiler_error(text, source)
                head = err.message if err else text.splitlines()[0]
                raise Outcome("compile_error", head, build_log=trim_log(text))
            raise Outcome("runtime_error", f"loading the program failed: {describe_exception(e, self.candidate_path)}")
        finally:
            if fast:
                with self.timed("waiting_for_precompiled_header"):
                    fast.wait(self.settings.build_timeout_s - (time.monotonic() - t0) - 5)
        model_new = getattr(mod, "ModelNew", None)
        if not isinstance(model_new, type):
            raise Outcome("static_rejected", "the program defines no class ModelNew")
        return model_new

    def install_fast_build(self):
        """Speed up load_inline builds (fast_build.py); KFORGE_FAST_BUILD=0 builds exactly as torch does."""
        from kforge_core.evaluation import fast_build

        if (self.backend.name not in fast_build.BACKENDS or not self.settings.fast_build
                or os.environ.get("KFORGE_FAST_BUILD", "1") == "0"):
            return None

        pch = os.environ.get("KFORGE_PCH_DIR") or str(self.cache_dir / "precompiled_headers")
        return fast_build.install(Path(pch) if pch != "off" else None, self.build_notes)

    def correctness(self, ref, model_new, device, sync) -> list[dict]:
        from kforge_core.evaluation import anticheat as AC
        from kforge_core.evaluation.correctness import compare

        self.log.stage("correctness")
        checks = self.settings.strictness != "off"
        trials, failures, first_outputs = [], [], None
        for i in range(self.settings.n_trials):
            seed = self.settings.seed + i  # fresh inputs and a fresh model pair per trial
            init, inputs = self.make_case(ref, seed)
            ref_model = self.make_reference(ref, init, seed, device)
            try:
                cand_model = _seeded(seed, lambda: model_new(*init)).to(device)
            except Exception as e:
                raise Outcome("runtime_error", f"ModelNew(*init_inputs) raised "
                                               f"{describe_exception(e, self.candidate_path)}")
            inputs = _to_device(inputs, device)
            pristine = AC.snapshot(inputs)
            cand_inputs = _clone(inputs)
            if checks and self.output_bytes:
                with self.timed("poison_free_memory"):
                    AC.poison_free_memory(device, 2 * self.output_bytes)
            # The candidate runs first, on its own copy of the inputs: nothing of the reference's run exists yet.
            call = lambda: cand_model(*cand_inputs)  # noqa: E731
            try:
                if checks and i == 0 and self.settings.strictness == "strict":
                    with self.timed("fallback_check_profiler"):
                        cand_ops = AC.aten_ops(lambda: call())
                    cand_inputs = _clone(inputs)
                cand_out = call()
                sync()
            except Exception as e:
                raise Outcome("runtime_error", f"trial {i + 1} (seed {seed}): ModelNew.forward raised "
                                               f"{describe_exception(e, self.candidate_path)}")
            if checks and i == 0 and self.settings.strictness == "strict":
                with self.timed("fallback_check_profiler"):
                    ref_ops = AC.aten_ops(lambda: self.run_reference(ref_model, _clone(inputs)))
                fallback = AC.fallback_violation(ref_ops, cand_ops)
                if fallback:
                    raise Outcome("runtime_error", f"rule violated: {fallback}")
            ref_out = self.run_reference(ref_model, inputs)
            sync()
            self.output_bytes = AC.output_bytes_hint(ref_out)
            if checks:
                cand_changed, ref_changed = AC.mutated(cand_inputs, pristine), AC.mutated(inputs, pristine)
                if cand_changed and not ref_changed:
                    raise Outcome("runtime_error", f"rule violated: the candidate modified its inputs in place "
                                                   f"({', '.join(cand_changed)}); the reference does not")
                cand_alias = AC.aliased(cand_out, cand_inputs)
                if cand_alias and not AC.aliased(ref_out, inputs):
                    raise Outcome("runtime_error", f"rule violated: output memory is input memory "
                                                   f"({', '.join(cand_alias)})")
            c = compare(ref_out, cand_out, self.settings.tolerances)
            if not c.structure_ok:
                trials.append({"seed": seed, "passed": False, "note": c.message})
                self.trials = trials
                raise Outcome("shape_mismatch", f"trial {i + 1} (seed {seed}): {c.message}")
            note = c.message
            if first_outputs is None:
                first_outputs = (AC.snapshot(cand_out), AC.snapshot(ref_out))
            elif not c.passed and _all_same(AC.snapshot(cand_out), first_outputs[0]) \
                    and not _all_same(AC.snapshot(ref_out), first_outputs[1]):
                note += "; the output did not change with the input (constant or cached result)"
            trials.append({"seed": seed, "passed": c.passed, "max_abs_err": c.max_abs_err,
                           "max_rel_err": c.max_rel_err, "mismatch_fraction": c.mismatch_fraction,
                           "worst": c.worst, "note": note})
            if not c.passed:
                failures.append(f"trial {i + 1} (seed {seed}): {note}; worst {c.worst}")
        self.trials = trials
        if failures:
            raise Outcome("numerical_mismatch", *failures)
        return trials

    def timing(self, ref, model_new, device, sync) -> tuple[dict, dict]:
        import torch

        from kforge_core.evaluation import timing as T

        self.log.stage("timing")
        s = self.settings
        seed = s.seed + 1000  # inputs distinct from every correctness trial
        init, inputs = self.make_case(ref, seed)
        inputs = _to_device(inputs, device)
        ref_model = self.make_reference(ref, init, seed, device)
        cand_model = _seeded(seed, lambda: model_new(*init)).to(device)
        fns = {"eager": lambda: ref_model(*inputs), "candidate": lambda: cand_model(*inputs)}
        errors = {}
        cache_key, cached = None, None
        if s.compile_reference and s.reuse_compiled_timing:
            from kforge_core.evaluation import reference_cache as RC

            cache_key = RC.key(self.problem["source"], RC.device_name(device.type), s.to_dict())
            cached = RC.load(self.cache_dir, cache_key)
        if s.compile_reference and not cached:
            try:
                compiled = torch.compile(ref_model)
                t0 = time.monotonic()
                with self.timed("torch_compile_reference"):
                    compiled(*inputs)  # compile outside the timed region
                self.log.write({"compile_reference_s": round(time.monotonic() - t0, 2)})
                fns["compiled"] = lambda: compiled(*inputs)
            except Exception as e:  # an inductor failure must not sink the candidate's verdict
                errors["compiled"] = describe_exception(e, "")
        clock = T.make_clock(device.type)
        try:
            stats = T.measure(fns, clock, s.warmup, s.min_reps, s.max_reps, s.min_timing_s)
        except Exception as e:
            raise Outcome("runtime_error", f"during timing: {describe_exception(e, self.candidate_path)}")
        if cached:
            from kforge_core.evaluation.result import TimingStats

            stats["compiled"] = TimingStats(**cached["compiled"])
            drift = stats["eager"].median_ms / cached["eager"]["median_ms"]
            self.timing_notes.append(
                f"torch.compile timing reused from {time.strftime('%Y-%m-%d %H:%M', time.localtime(cached['measured_at']))}"
                f" (same problem, device and torch); eager now runs at {drift:.2f}x the time it took then")
        elif cache_key and "compiled" in stats:
            RC.save(self.cache_dir, cache_key, vars(stats["compiled"]), vars(stats["eager"]))
        if s.strictness != "off":
            self.check_after_timing(ref, ref_model, cand_model, inputs, seed, sync)
            self.flags += self.review_flags(stats, inputs, cand_model, device, sync)
        return {k: vars(v) for k, v in stats.items()}, errors

    def check_after_timing(self, ref, ref_model, cand_model, inputs, seed, sync) -> None:
        """Give the timed input tensors new values in place: an output cached during timing (keyed by the
        tensors' identity or address) no longer matches."""
        from kforge_core.evaluation import anticheat as AC
        from kforge_core.evaluation.correctness import compare

        _, fresh = self.make_case(ref, seed + 1)
        for (_, t), (_, f) in zip(AC.tensors(inputs), AC.tensors(fresh)):
            t.copy_(f.to(t.device))
        cand_out = cand_model(*inputs)
        sync()
        c = compare(self.run_reference(ref_model, inputs), cand_out, self.settings.tolerances)
        if not c.passed:
            raise Outcome("numerical_mismatch", "after timing, the inputs were given new values in place and the "
                                                f"output no longer matches ({c.message or 'structure changed'}): a "
                                                "result cached during timing?")

    def review_flags(self, stats, inputs, cand_model, device, sync) -> list[str]:
        """Correct, but implausible: speedups past the review threshold or past the memory roofline."""
        from kforge_core.evaluation import anticheat as AC

        flags = []
        cand, eager = stats.get("candidate"), stats.get("eager")
        if cand and eager and cand.median_ms > 0 and eager.median_ms / cand.median_ms > self.settings.suspicious_speedup:
            flags.append(f"speedup {eager.median_ms / cand.median_ms:.1f}x vs eager is above the "
                         f"{self.settings.suspicious_speedup:g}x review threshold: check the kernel by hand")
        if device.type == "cuda" and cand:
            io_bytes = sum(t.numel() * t.element_size() for _, t in AC.tensors(inputs)) + self.output_bytes
            with self.timed("roofline_bandwidth_probe"):
                floor = AC.roofline_ms(io_bytes, AC.measure_copy_bandwidth(device))
            if cand.median_ms < 0.9 * floor:
                flags.append(f"candidate time {cand.median_ms * 1e3:.1f} us is below the memory roofline "
                             f"({floor * 1e3:.1f} us to move {io_bytes / 1e6:.1f} MB at the measured bandwidth)")
            wall = []
            for _ in range(5):  # work left on other streams shows up here and not in the event timing
                t0 = time.perf_counter()
                cand_model(*inputs)
                sync()
                wall.append((time.perf_counter() - t0) * 1e3)
            if sorted(wall)[2] > 3 * cand.median_ms + 0.2:
                flags.append(f"wall-clock time with a full device sync ({sorted(wall)[2]:.3f} ms) far exceeds the "
                             f"stream-timed {cand.median_ms:.3f} ms: work outside the timed stream?")
        return flags

    # -- driver ---------------------------------------------------------------------------------------
    def run(self) -> dict:
        import torch

        if self.settings.threads:
            torch.set_num_threads(self.settings.threads)
        device = torch.device(self.backend.device())
        sync = {"cuda": torch.cuda.synchronize, "mps": lambda: torch.mps.synchronize()}.get(device.type,
                                                                                          lambda: None)
        interpreted = self.backend.is_interpreted()
        if self.job.get("mode") == "build":  # ahead-of-time build on a CPU worker: no device, no problem run
            base = {"problem": self.problem["name"], "backend": self.backend.name, "trials": [], "timings": {},
                    "build_notes": self.build_notes}
            try:
                self.build()
                return {**base, "verdict": "built", "messages": ["the program builds and imports"]}
            except Outcome as o:
                return {**base, "verdict": o.verdict, "messages": o.messages, "build_log": o.build_log}
        with self.timed("environment"):
            env = environment(device.type)
        result = {"problem": self.problem["name"], "backend": self.backend.name, "environment": env, "trials": [],
                  "timings": {}, "timing_errors": {}, "interpreted": interpreted, "detail_seconds": self.detail_seconds,
                  "build_notes": self.build_notes}
        self.trials: list[dict] = []
        self.flags: list[str] = []
        self.timing_notes: list[str] = []
        self.output_bytes = 0
        ref = self.load_problem()
        if self.job.get("reference_only"):
            init, inputs = self.make_case(ref, self.settings.seed)
            self.run_reference(self.make_reference(ref, init, self.settings.seed, device),
                               _to_device(inputs, device))
            return {**result, "verdict": "correct", "messages": ["the reference runs and returns tensors"]}
        try:
            model_new = self.build()
            self.correctness(ref, model_new, device, sync)
            result["trials"] = self.trials
            if self.settings.timing and not interpreted:
                result["timings"], result["timing_errors"] = self.timing(ref, model_new, device, sync)
            result.update(verdict="correct", messages=[f"all {len(self.trials)} trials match the reference"],
                          flags=self.flags, timing_notes=self.timing_notes)
        except Outcome as o:
            result.update(verdict=o.verdict, messages=o.messages, build_log=o.build_log, trials=self.trials)
        return result


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
