"""The round state machine: generate -> evaluate -> profile -> analyse -> human gate (or auto) -> next round.

Runs without Streamlit (the CLI's `kforge run` and the app's background worker both drive it). Each step of
a round writes its artifact when it completes, and a step runs only when its artifact is missing: a run
killed at any point resumes by redoing just the step in flight. Nothing already written is ever removed (a
re-analysis moves the analysis it replaces under previous_analyses/).
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field, replace

from kforge_core import artifacts as A

from kforge_core.agents.analysis import AnalysisAgent, AnalysisRequest
from kforge_core.agents.generation import GenerationAgent, GenerationRequest, ReferenceKernel
from kforge_core.agents.parsing import Recommendation
from kforge_core.backends import get_backend
from kforge_core.evaluation import EvalResult, EvalSettings, Verdict
from kforge_core.executors import Executor
from kforge_core.llm.base import ImageData, Provider
from kforge_core.llm.base import Cancelled
from kforge_core.problems import Problem, ProblemError
from kforge_core.profile import ProfileReport, report_from_eval
from kforge_core.run_record import GATE_ACTIONS, GateDecision, RunRecord  # noqa: F401 (re-exported)
from kforge_core.store import Store

PROFILERS = ("auto", "torch", "ncu", "timings", "none")


@dataclass
class RunConfig:
    problem: dict
    backend: str
    provider: dict  # ProviderConfig.to_dict(): no secrets
    analysis_provider: dict | None = None  # None: the generation provider
    max_rounds: int = 5
    target_speedup: float | None = None
    mode: str = "auto"  # "auto" or "gated"
    reference_kernel: dict | None = None  # {"backend": ..., "code": ...}
    eval_settings: dict = field(default_factory=dict)
    profiler: str = "auto"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "RunConfig":
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


class Session(RunRecord):
    def __init__(self, store: Store, run_id: str, generator: Provider, analyst: Provider | None = None,
                 executor: Executor | None = None):
        super().__init__(store, run_id)
        self.executor = executor or Executor()  # where evaluations and profiles run
        self.config = RunConfig.from_dict(store.config(run_id))
        self.problem = Problem.from_dict(self.config.problem)
        self.backend = get_backend(self.config.backend)
        self.gen = GenerationAgent(generator)
        self.ana = AnalysisAgent(analyst or generator)
        self.settings = EvalSettings.from_dict(self.config.eval_settings)
        self.stop_requested = threading.Event()
        for provider in {id(p): p for p in (generator, analyst) if p is not None}.values():
            if hasattr(provider, "cancelled"):  # a paste-in provider waits for a person: Stop must end the wait
                provider.cancelled = self.stop_requested.is_set

    @classmethod
    def create(cls, store: Store, config: RunConfig) -> str:
        return store.create_run(config.to_dict())

    def reanalyse(self, idx: int) -> None:
        """Run the analysis agent again for a round (e.g. after screenshots were uploaded). The earlier
        analysis is kept under previous_analyses/; if this is interrupted, resuming the run finishes it."""
        result = self.result(idx)
        if result is None or not result.correct:
            return
        rounds = {r["idx"]: r["phase"] for r in self.store.rounds(self.run_id)}
        after = rounds.get(idx) if rounds.get(idx) in ("gate", "done") else "gate"
        self.store.set_round(self.run_id, idx, "reanalysing")
        if self.store.exists(self.run_id, idx, A.ANALYSIS):
            self._set_aside(idx, A.ANALYSIS_FILES, A.PREVIOUS_ANALYSES)
        # the same step again: a scripted analyst gives this round's answer, not the next round's
        if self.ana.provider is not self.gen.provider:
            self.ana.provider.resume_after(sum(1 for r in self.store.rounds(self.run_id)
                                               if r["idx"] < idx and self.store.exists(self.run_id, r["idx"], A.ANALYSIS)))
        self._analyse(idx, self.program(idx) or "", result, self._load_report(idx))
        self.store.set_round(self.run_id, idx, after)

    def _set_aside(self, idx: int, names: tuple[str, ...], folder: str) -> None:
        """Move a step's files into folder/NN/ (numbered in order), so redoing the step deletes nothing."""
        present = [n for n in names if self.store.exists(self.run_id, idx, n)]
        if present:
            n = len(list((self.store.round_dir(self.run_id, idx) / folder).glob("*"))) + 1
            for name in present:
                self.store.move(self.run_id, idx, name, f"{folder}/{n:02d}/{name}")

    # -- the loop --------------------------------------------------------------------------------------------
    def run(self) -> str:
        """Advance until the run ends or waits at a gate; returns the run's status."""
        self.store.update_run(self.run_id, status="running")
        try:
            in_flight = self.round_in_flight()
            if in_flight is not None:  # finish what a killed process left, keeping everything it wrote
                self._round(in_flight)
            while True:
                status = self._next_status()
                if status:
                    self.store.update_run(self.run_id, status=status)
                    return status
                self._round(len(self.completed_rounds()) + 1)
        except ProblemError as e:
            self.store.update_run(self.run_id, status="failed", note=str(e))
            return "failed"
        except Cancelled as e:  # Stop while a paste-in answer was awaited: the step is redone on resume
            self.store.update_run(self.run_id, status="stopped", note=str(e))
            return "stopped"

    def _next_status(self) -> str | None:
        run = self.store.run(self.run_id)
        if self.stop_requested.is_set() or run["status"] == "stopped":
            return "stopped"
        if self.awaiting_gate() is not None:
            return "awaiting_gate"
        done = self.completed_rounds()
        if done and (self.gate(done[-1]) or {}).get("action") == "stop":
            return "stopped"
        if len(done) >= self.config.max_rounds:
            return "finished"
        best = run["best_speedup"]
        if self.config.target_speedup and best is not None and best >= self.config.target_speedup:
            return "finished"
        return None

    def _inputs_for(self, idx: int):
        """Previous code, result, recommendation and gate choices that feed round `idx`."""
        if idx == 1:
            return None, None, None, {}
        prev = idx - 1
        gate = self.gate(prev) or {}
        rec = self.recommendation(prev)
        if gate.get("action") == "edit_recommendation" and gate.get("recommendation"):
            rec = Recommendation.from_dict({**gate["recommendation"], "edited_by_user": True})
        result = self.result(prev)
        if result is not None and not result.verdict.candidates_fault:
            result = None  # the harness failed, not the program: nothing for the agent to fix
        return self.program(prev), result, rec, gate

    def _round(self, idx: int) -> None:
        """One round, each step skipped when its artifact is already written (a resumed round)."""
        s, rid = self.store, self.run_id
        phase = next((r["phase"] for r in s.rounds(rid) if r["idx"] == idx), None)
        gate = (self.gate(idx - 1) or {}) if idx > 1 else {}  # the previous round's gate choices
        if not s.exists(rid, idx, A.GENERATION):
            self._set_aside(idx, A.GENERATION_FILES, A.INTERRUPTED)  # what a killed generation left
            s.set_round(rid, idx, "generating")
            self._generate(idx)
        program = self.program(idx)
        result = self.result(idx)
        if result is None:
            if program is None:
                failure = (s.read_json(rid, idx, A.GENERATION) or {}).get("failure") or "no program"
                result = EvalResult(Verdict.GENERATION_FAILURE, [failure], problem=self.problem.name,
                                    backend=self.backend.name, stage="generation")
            else:
                s.set_round(rid, idx, "evaluating")
                settings = replace(self.settings, progress_file=str(s.round_dir(rid, idx) / A.EVAL_PROGRESS))
                result = self.executor.evaluate(self.problem, program, self.backend.name, settings)
            s.write_json(rid, idx, A.EVAL, result.to_dict())
        speedup = result.speedup("eager") if result.correct else None
        s.set_round(rid, idx, "evaluated", result.verdict.value, speedup)
        self._update_best(idx, speedup if result.speedup_counted else None)
        if result.correct:
            if s.exists(rid, idx, A.PROFILE):
                report = self._load_report(idx)
            else:
                s.set_round(rid, idx, "profiling")
                skip = gate.get("action") == "skip_profiling"
                report = report_from_eval(result) if skip else self._profile(idx, program, result)
                s.write_json(rid, idx, A.PROFILE, report.to_dict())
            if not s.exists(rid, idx, A.ANALYSIS):
                self._set_aside(idx, A.ANALYSIS_FILES, A.INTERRUPTED)  # what a killed analysis left
                self._analyse(idx, program, result, report)
        if phase == "reanalysing":  # a re-analysis was interrupted: it is done now, back to the gate
            s.set_round(rid, idx, "gate" if self.gate(idx) is None else "done")
        else:
            gated = self.config.mode == "gated" and idx < self.config.max_rounds
            s.set_round(rid, idx, "gate" if gated else "done")
        s.update_run(rid, rounds_done=len(self.completed_rounds()))

    def _generate(self, idx: int) -> None:
        """Write the round's program (if any) and then generation.json, whose presence marks the step done."""
        s, rid = self.store, self.run_id
        code, prev_result, rec, gate = self._inputs_for(idx)
        if gate.get("action") == "edit_code" and gate.get("code"):
            s.write_text(rid, idx, A.PROGRAM, gate["code"])
            s.write_json(rid, idx, A.GENERATION, {"source": "edited by the user at the gate"})
            return
        ref = self.config.reference_kernel
        out = self.gen.generate(GenerationRequest(
            self.problem, self.backend, idx, code, prev_result, rec,
            ReferenceKernel(ref["backend"], ref["code"]) if ref else None, self.settings.kernel_policy))
        s.write_json(rid, idx, A.GENERATION_PROMPT, [{"role": m.role, "text": m.text} for m in out.messages])
        s.write_text(rid, idx, A.GENERATION_ANSWER, out.answer)
        if out.program is not None:
            s.write_text(rid, idx, A.PROGRAM, out.program)
        s.write_json(rid, idx, A.GENERATION, {
            "failure": out.failure, "notes": out.notes, "usage": asdict(out.usage), "model": out.model,
            "seconds": out.seconds, "provider": self.gen.provider.label, "call": out.call,
            "recommendation_used": rec.to_dict() if rec else None})

    def _update_best(self, idx: int, speedup: float | None) -> None:
        run = self.store.run(self.run_id)
        if speedup is not None and (run["best_speedup"] is None or speedup > run["best_speedup"]):
            self.store.update_run(self.run_id, best_speedup=speedup, best_round=idx)

    def _profile(self, idx: int, program: str, result: EvalResult) -> ProfileReport:
        base = report_from_eval(result)
        tool = self.config.profiler
        if tool == "auto":
            tool = "ncu" if self.backend.name == "cuda" else "torch"
        if tool not in ("ncu", "torch"):
            return base
        report, notes, ncu_csv = self.executor.profile(self.problem, program, self.backend.name, tool, self.settings)
        if ncu_csv:
            self.store.write_text(self.run_id, idx, A.NCU_CSV, ncu_csv)
        base.notes += notes
        if report is None:
            return base
        report.metrics = base.metrics + report.metrics
        report.notes = base.notes + report.notes
        return report

    def _load_report(self, idx: int) -> ProfileReport:
        d = self.store.read_json(self.run_id, idx, A.PROFILE) or {"tool": "none"}
        images = [ImageData(p.read_bytes(), "image/png", A.image_label(p.stem))
                  for p in self.store.images(self.run_id, idx)]
        return ProfileReport.from_dict(d, images)

    def _analyse(self, idx: int, program: str, result: EvalResult, report: ProfileReport) -> None:
        """Write the analysis artifacts, analysis.json last (its presence marks the step done)."""
        s, rid = self.store, self.run_id
        report.images = report.images or self._load_report(idx).images
        history = []
        for r in s.rounds(rid):
            if r["idx"] < idx:
                rec = self.recommendation(r["idx"])
                history.append({"round": r["idx"], "verdict": r["verdict"], "speedup": r["speedup"],
                                "recommendation": rec.title if rec else ""})
        if next(r["phase"] for r in s.rounds(rid) if r["idx"] == idx) != "reanalysing":
            s.set_round(rid, idx, "analysing")
        out = self.ana.analyze(AnalysisRequest(self.problem, self.backend, program, result, report, idx, history))
        s.write_json(rid, idx, A.ANALYSIS_PROMPT, [{"role": m.role, "text": m.text, "images": len(m.images)}
                                                   for m in out.messages])
        s.write_text(rid, idx, A.ANALYSIS_ANSWER, out.answer)
        if out.recommendation:
            s.write_json(rid, idx, A.RECOMMENDATION, out.recommendation.to_dict())
        s.write_json(rid, idx, A.ANALYSIS, {"error": out.error, "usage": asdict(out.usage),
                                            "images_sent": out.images_sent, "images_omitted": out.images_omitted,
                                            "provider": self.ana.provider.label, "model": out.call.get("model"),
                                            "seconds": out.call.get("seconds"), "call": out.call})

    # -- export ----------------------------------------------------------------------------------------------
    def best_kernel_source(self) -> str | None:
        return self.store.best_kernel_source(self.run_id)
