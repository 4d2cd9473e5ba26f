"""The stages of one evaluation, run inside the worker process (worker.py): load the problem, check it fits,
build, correctness, timing. Every candidate call runs in a "candidate" region and everything else in a
"harness" region (events.jsonl), so a failure is charged to whoever was running: an exception or a death in
harness code is a harness_error with its stage and cause, never the candidate's verdict.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from kforge_core.evaluation.worker.environment import environment
from kforge_core.evaluation.judging.honesty import guarded_now
from kforge_core.evaluation.worker.loading import describe_exception, load_source_module, seeded, to_device
from kforge_core.evaluation.worker.correctness_stage import CorrectnessStage
from kforge_core.evaluation.outcome import Outcome, ProblemFailure, gib, traceback_tail  # noqa: F401 (re-exported)
from kforge_core.evaluation.result import Verdict
from kforge_core.evaluation.worker.timing_stage import TimingStage

FIT_HEADROOM = 1.15  # allocator fragmentation and workspaces beyond the measured peaks


def compile_error(text: str, source: str) -> Outcome:
    """A failed build's verdict: the first compiler error, located in the candidate's file, and the trimmed log."""
    from kforge_core.evaluation.building.build_errors import first_compiler_error, trim_log

    err = first_compiler_error(text, source)
    return Outcome(Verdict.COMPILE_ERROR, err.message if err else text.splitlines()[0], build_log=trim_log(text))


class Evaluation(CorrectnessStage, TimingStage):
    def __init__(self, job: dict, jobdir: Path, log):
        from kforge_core.backends import get_backend
        from kforge_core.evaluation.settings import default_cache_dir
        from kforge_core.evaluation.settings import EvalSettings

        self.job, self.jobdir, self.log = job, jobdir, log
        self.settings = EvalSettings.from_dict(job["settings"])
        self.backend = get_backend(job["backend"])
        self.problem = job["problem"]
        self.candidate_path = str(jobdir / "candidate.py")
        self.cache_dir = Path(self.settings.cache_dir) if self.settings.cache_dir else default_cache_dir()
        self.detail_seconds: dict[str, float] = {}
        self.build_notes: list[str] = []
        self.trials: list[dict] = []
        self.flags: list[str] = []
        self.timing_notes: list[str] = []
        self.memory: dict[str, float] = {}  # MiB: reference peak, whole evaluation's peak, inputs, outputs
        self.output_bytes = 0
        self.own_share: float | None = None  # honesty.kernel_attribution, once timed
        self.attribution: dict = {}
        self.reference_output_constant = False  # the reference's outputs did not change over the trials' inputs
        self.guarded = guarded_now()  # before the candidate is imported
        self.region_name = ""
        # where get_inputs() runs: the GPU for CUDA backends (see _draw_inputs), else the host
        self.input_device = "cuda" if self.backend.device() == "cuda" and self.settings.inputs_on_device else None

    def timed(self, name: str):
        """Add the time spent in a block to detail_seconds (where a verdict's seconds go)."""

        @contextlib.contextmanager
        def block():
            t0 = time.monotonic()
            try:
                yield
            finally:
                self.detail_seconds[name] = round(self.detail_seconds.get(name, 0.0) + time.monotonic() - t0, 3)

        return block()

    @contextlib.contextmanager
    def candidate_code(self, what: str):
        """The candidate's code runs inside; its exceptions become runtime_error (with memory figures on OOM).
        The region is logged so the parent knows whose code a crashing process was running."""
        self._region("candidate")
        try:
            yield
        except Outcome:
            raise
        except Exception as e:
            raise Outcome(Verdict.RUNTIME_ERROR, f"{what} raised {describe_exception(e, self.candidate_path)}"
                          + self._oom_figures(e))
        finally:
            self._region("harness")

    def _region(self, name: str) -> None:
        if name != self.region_name:
            self.region_name = name
            self.log.write({"region": name})

    def _oom_figures(self, e: BaseException) -> str:
        import torch

        if not isinstance(e, torch.OutOfMemoryError) or not torch.cuda.is_available():
            return ""
        free, total = torch.cuda.mem_get_info()
        return (f" [candidate's OOM: {gib(torch.cuda.memory_allocated())} allocated by this process, "
                f"{gib(free)} free of {gib(total)}; the reference's own peak is "
                f"{self.memory.get('reference_peak_mb', 0) / 1024:.2f} GiB]")

    # -- stages ---------------------------------------------------------------------------------------
    def load_problem(self, log_stage: bool = True):
        if log_stage:
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
                value = self._draw_inputs(ref, seed) if fn == "get_inputs" else seeded(seed, ref.get_init_inputs)
            except Exception as e:
                raise ProblemFailure(f"{path}: {fn}() raised {describe_exception(e, path)}")
            if not isinstance(value, (list, tuple)):
                raise ProblemFailure(f"{path}: {fn}() must return a list, got {type(value).__name__}")
            if fn == "get_init_inputs":
                init = value
        return init, value

    def _draw_inputs(self, ref, seed: int):
        """get_inputs() under `seed`, with the GPU as the default device where input_device says so:
        KernelBench's inputs of several GB take seconds to draw on the host and copy over, milliseconds on
        the GPU. Same distributions, other values (the GPU's generator), the same for the reference and the
        candidate. A problem whose get_inputs() cannot run that way (a CPU generator, numpy) gets its inputs
        on the host, for this whole evaluation."""
        if self.input_device is not None:
            import torch

            try:
                with torch.device(self.input_device):
                    return seeded(seed, ref.get_inputs)
            except Exception as e:
                self.input_device = None
                self.timing_notes.append(f"inputs made on the host: get_inputs() failed with the GPU as default "
                                         f"device ({type(e).__name__}: {str(e)[:120]})")
        return seeded(seed, ref.get_inputs)

    def make_reference(self, ref, init, seed: int, device):
        try:
            return seeded(seed, lambda: ref.Model(*init)).to(device)
        except Exception as e:
            self._reference_oom(e)
            path = self.problem["path"]
            raise ProblemFailure(f"{path}: Model(*get_init_inputs()) raised {describe_exception(e, path)}")

    def run_reference(self, model, inputs):
        from kforge_core.evaluation.judging.correctness import check_reference_outputs

        path = self.problem["path"]
        try:
            out = model(*inputs)
        except Exception as e:
            self._reference_oom(e)
            raise ProblemFailure(f"{path}: Model.forward raised {describe_exception(e, path)}")
        bad = check_reference_outputs(out)
        if bad:
            raise ProblemFailure(f"{path}: {bad}")
        return out

    def _reference_oom(self, e: BaseException) -> None:
        """The reference running out of device memory is not a broken problem: it does not fit here."""
        import torch

        if isinstance(e, torch.OutOfMemoryError):
            free, total = torch.cuda.mem_get_info() if torch.cuda.is_available() else (0, 0)
            raise Outcome(Verdict.DOES_NOT_FIT, f"the reference ran out of device memory ({gib(free)} free of "
                                                f"{gib(total)} at the time): this problem does not fit this GPU "
                                                f"beside the evaluation")

    def scale_run_timeout(self, case_s: float) -> None:
        """Correctness and timing make inputs and run the reference ~3 times per trial plus ~6 more: on a
        problem whose inputs take seconds to make (KernelBench's 6 GB level-1 inputs are built on the host),
        the fixed run limit would end the harness's own work. Ask the parent for a limit that grows with
        the measured cost of one case (the candidate's own time is still bounded by the fixed part)."""
        s = self.settings
        scaled = s.run_timeout_s + case_s * (3 * s.n_trials + 6)
        if scaled > s.run_timeout_s * 1.05:
            self.log.write({"run_timeout_s": round(scaled, 1)})

    def fit_check(self, ref, device, sync) -> None:
        """Run the reference once alone and record its peak device memory; refuse, before the candidate runs,
        a problem whose reference and candidate cannot both fit (the harness itself adds little: inputs are
        fingerprinted, not copied, and comparisons go by chunks)."""
        import torch

        self.log.stage("fit_check")
        seed = self.settings.seed + 7777  # not a trial's seed: its output is no trial's answer
        t0 = time.monotonic()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        init, inputs = self.make_case(ref, seed)  # inputs made on the GPU count in the reference's peak
        model = self.make_reference(ref, init, seed, device)
        inputs = to_device(inputs, device)
        out = self.run_reference(model, inputs)
        sync()
        peak = torch.cuda.max_memory_allocated() - before
        self.scale_run_timeout(time.monotonic() - t0)
        from kforge_core.evaluation.judging import anticheat as AC

        self.output_bytes = AC.output_bytes_hint(out)
        self.memory.update(reference_peak_mb=round(peak / 2**20, 1),
                           inputs_mb=round(sum(t.numel() * t.element_size() for _, t in AC.tensors(inputs)) / 2**20, 1),
                           outputs_mb=round(self.output_bytes / 2**20, 1))
        del model, inputs, out
        torch.cuda.empty_cache()
        free, total = torch.cuda.mem_get_info()
        need = 2 * peak * FIT_HEADROOM  # the reference and a candidate of the same footprint, side by side
        if need > free:
            raise Outcome(Verdict.DOES_NOT_FIT, f"does not fit: the reference alone peaks at {gib(peak)}; with a "
                                                f"candidate of the same footprint it needs ~{gib(need)}, "
                                                f"{gib(free)} free of {gib(total)} on this GPU")

    def build(self):
        self.log.stage("build")
        source = Path(self.candidate_path).read_text()
        fast = self.install_fast_build()
        t0 = time.monotonic()
        self._region("candidate")  # importing the program runs its code (and its builds)
        try:
            mod = load_source_module(source, self.candidate_path, "kforge_candidate")
        except SyntaxError as e:
            raise Outcome(Verdict.COMPILE_ERROR, f"candidate.py:{e.lineno}: SyntaxError: {e.msg}")
        except Exception as e:
            text = str(e)
            if "Error building extension" in text or "error:" in text and "ninja" in text.lower():
                raise compile_error(text, source)
            raise Outcome(Verdict.RUNTIME_ERROR, f"loading the program failed: {describe_exception(e, self.candidate_path)}")
        finally:
            self._region("harness")
            if fast:
                with self.timed("waiting_for_precompiled_header"):
                    fast.wait(self.settings.build_timeout_s - (time.monotonic() - t0) - 5)
        model_new = getattr(mod, "ModelNew", None)
        if not isinstance(model_new, type):
            raise Outcome(Verdict.STATIC_REJECTED, "the program defines no class ModelNew")
        if fast is not None and fast.calls == 0 and "load_inline" in source:
            self.build_in_init(model_new, source)
        return model_new

    def build_in_init(self, model_new, source: str) -> None:
        """A program that calls load_inline in ModelNew.__init__ builds when the model is first made. Made once
        here, that build is a build: under the build deadline, on a build worker ahead of the GPU stage, cached
        for the trials. Anything else that fails here (a CUDA tensor on a build worker without a GPU) is left
        for the trials to report; a compiler error is the verdict."""
        try:
            ref = self.load_problem(log_stage=False)
            init = seeded(self.settings.seed, ref.get_init_inputs)
        except Exception:
            return
        self._region("candidate")
        try:
            with self.timed("build_in_model_init"):
                seeded(self.settings.seed, lambda: model_new(*init))
        except Exception as e:
            text = str(e)
            if "Error building extension" in text:
                raise compile_error(text, source)
        finally:
            self._region("harness")

    def install_fast_build(self):
        """Speed up load_inline builds (fast_build.py); KFORGE_FAST_BUILD=0 builds exactly as torch does."""
        from kforge_core.evaluation.building import fast_build

        if (self.backend.name not in fast_build.BACKENDS or not self.settings.fast_build
                or os.environ.get("KFORGE_FAST_BUILD", "1") == "0"):
            return None

        pch = os.environ.get("KFORGE_PCH_DIR") or str(self.cache_dir / "precompiled_headers")
        split = self.settings.split_build and os.environ.get("KFORGE_SPLIT_BUILD", "1") != "0"
        return fast_build.install(Path(pch) if pch != "off" else None, self.build_notes,
                                  self.cache_dir / "split_build" if split else None)

    # -- driver ---------------------------------------------------------------------------------------
    def run(self) -> dict:
        import torch

        if self.settings.threads:
            torch.set_num_threads(self.settings.threads)
        device = torch.device(self.backend.device())
        sync = {"cuda": torch.cuda.synchronize, "mps": lambda: torch.mps.synchronize()}.get(device.type,
                                                                                          lambda: None)
        if self.job.get("mode") == "build":  # ahead-of-time build on a CPU worker: no device, no problem run
            base = {"problem": self.problem["name"], "backend": self.backend.name, "trials": [], "timings": {},
                    "build_notes": self.build_notes}
            try:
                self.build()
                return {**base, "verdict": "built", "messages": ["the program builds and imports"]}
            except Outcome as o:
                return {**base, "verdict": o.verdict.value, "messages": o.messages, "build_log": o.build_log}
        with self.timed("environment"):
            env = environment(device.type)
        result = {"problem": self.problem["name"], "backend": self.backend.name, "environment": env, "trials": [],
                  "timings": {}, "timing_errors": {}, "interpreted": self.backend.is_interpreted(),
                  "detail_seconds": self.detail_seconds, "build_notes": self.build_notes, "memory": self.memory}
        self._region("harness")
        ref = self.load_problem()
        try:
            if device.type == "cuda":
                self.fit_check(ref, device, sync)
                torch.cuda.reset_peak_memory_stats()
            if self.job.get("reference_only"):
                result.update(self.reference_only(ref, device, sync))
            else:
                self.evaluate(ref, device, sync, result)
        except Outcome as o:
            result.update(verdict=o.verdict.value, messages=o.messages, build_log=o.build_log, trials=self.trials)
        except ProblemFailure:
            raise
        except Exception as e:  # the harness's own code failed: never the candidate's verdict
            stage = list(self.log.stage_started)[-1]
            result.update(verdict=Verdict.HARNESS_ERROR.value, trials=self.trials, messages=[
                f"the harness failed during {stage} (not the candidate's fault): {type(e).__name__}: "
                f"{str(e)[:300]}", traceback_tail(e)])
        if device.type == "cuda":
            self.memory["evaluation_peak_mb"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
        return result

    def evaluate(self, ref, device, sync, result: dict) -> None:
        model_new = self.build()
        self.correctness(ref, model_new, device, sync)
        result["trials"] = self.trials
        if self.settings.timing and not self.backend.is_interpreted():
            result["timings"], result["timing_errors"] = self.timing(ref, model_new, device, sync)
        if self.settings.strictness != "off":
            self.check_guarded(self.guarded)
        result.update(verdict=Verdict.CORRECT.value, messages=[f"all {len(self.trials)} trials match the reference"],
                      flags=self.flags, timing_notes=self.timing_notes, own_kernel_share=self.own_share,
                      attribution=self.attribution)

    def reference_only(self, ref, device, sync) -> dict:
        """`kforge check`: the reference runs and returns tensors; with timing on, its eager (and
        torch.compile) time by the same protocol as a candidate's."""
        from kforge_core.evaluation.judging import timing as T

        self.log.stage("reference")
        init, inputs = self.make_case(ref, self.settings.seed)
        model = self.make_reference(ref, init, self.settings.seed, device)
        inputs = to_device(inputs, device)
        self.run_reference(model, inputs)
        sync()
        out = {"verdict": Verdict.CORRECT.value, "messages": ["the reference runs and returns tensors"]}
        if self.settings.timing:
            self.log.stage("timing")
            fns = {"eager": lambda: model(*inputs)}
            if self.settings.compile_reference:
                import torch

                try:
                    compiled = torch.compile(model)
                    compiled(*inputs)
                    fns["compiled"] = lambda: compiled(*inputs)
                except Exception as e:
                    out["timing_errors"] = {"compiled": describe_exception(e, "")}
            s = self.settings
            stats = T.measure(fns, T.make_clock(device.type), s.warmup, s.min_reps, s.max_reps, s.min_timing_s)
            out["timings"] = {k: vars(v) for k, v in stats.items()}
        return out

