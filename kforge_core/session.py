"""The round state machine: generate -> evaluate -> profile -> analyse -> human gate (or auto) -> next round.

Runs without Streamlit (the CLI's `kforge run` and the app's background worker both drive it). Every phase
is persisted through the Store as it completes; a run resumes from its last completed round.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field

from kforge_core.agents.analysis import AnalysisAgent, AnalysisRequest
from kforge_core.agents.generation import GenerationAgent, GenerationRequest, ReferenceKernel
from kforge_core.agents.parsing import Recommendation
from kforge_core.backends import get_backend
from kforge_core.evaluation import EvalResult, EvalSettings, Verdict
from kforge_core.executors import Executor
from kforge_core.llm.base import ImageData, Provider
from kforge_core.problems import Problem, ProblemError
from kforge_core.profile import ProfileReport, report_from_eval
from kforge_core.store import Store

GATE_ACTIONS = ("accept", "edit_recommendation", "edit_code", "skip_profiling", "stop")
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


@dataclass
class GateDecision:
    action: str  # one of GATE_ACTIONS
    recommendation: dict | None = None  # edited recommendation
    code: str | None = None  # edited program: evaluated as the next round's candidate

    def __post_init__(self):
        if self.action not in GATE_ACTIONS:
            raise ValueError(f"unknown gate action {self.action!r}; one of {GATE_ACTIONS}")


class Session:
    def __init__(self, store: Store, run_id: str, generator: Provider, analyst: Provider | None = None,
                 executor: Executor | None = None):
        self.store, self.run_id = store, run_id
        self.executor = executor or Executor()  # where evaluations and profiles run
        self.config = RunConfig.from_dict(store.config(run_id))
        self.problem = Problem.from_dict(self.config.problem)
        self.backend = get_backend(self.config.backend)
        self.gen = GenerationAgent(generator)
        self.ana = AnalysisAgent(analyst or generator)
        self.settings = EvalSettings.from_dict(self.config.eval_settings)
        self.stop_requested = threading.Event()

    @classmethod
    def create(cls, store: Store, config: RunConfig) -> str:
        return store.create_run(config.to_dict())

    # -- state read back from the store --------------------------------------------------------------------
    def completed_rounds(self) -> list[int]:
        return [r["idx"] for r in self.store.rounds(self.run_id) if r["phase"] in ("done", "gate")]

    def result(self, idx: int) -> EvalResult | None:
        d = self.store.read_json(self.run_id, idx, "eval.json")
        return EvalResult.from_dict(d) if d else None

    def recommendation(self, idx: int) -> Recommendation | None:
        d = self.store.read_json(self.run_id, idx, "recommendation.json")
        return Recommendation.from_dict(d) if d else None

    def gate(self, idx: int) -> dict | None:
        return self.store.read_json(self.run_id, idx, "gate.json")

    def awaiting_gate(self) -> int | None:
        rounds = self.store.rounds(self.run_id)
        if rounds and rounds[-1]["phase"] == "gate" and self.gate(rounds[-1]["idx"]) is None:
            return rounds[-1]["idx"]
        return None

    # -- human gate -------------------------------------------------------------------------------------------
    def decide(self, idx: int, decision: GateDecision) -> None:
        self.store.write_json(self.run_id, idx, "gate.json", asdict(decision))
        self.store.set_round(self.run_id, idx, "done")
        if decision.action == "stop":
            self.store.update_run(self.run_id, status="stopped", note="stopped at the gate")

    def add_screenshots(self, idx: int, images: list[ImageData]) -> None:
        for n, img in enumerate(images, len(self.store.images(self.run_id, idx)) + 1):
            self.store.write_bytes(self.run_id, idx, f"images/{n:02d}_{_slug(img.label)}.png", img.data)

    def reanalyse(self, idx: int) -> None:
        """Run the analysis agent again for a round (e.g. after screenshots were uploaded)."""
        result = self.result(idx)
        if result is None or not result.correct:
            return
        report = self._load_report(idx)
        self._analyse(idx, self.store.read_text(self.run_id, idx, "program.py") or "", result, report)

    # -- the loop --------------------------------------------------------------------------------------------
    def run(self) -> str:
        """Advance until the run ends or waits at a gate; returns the run's status."""
        self.store.discard_incomplete_rounds(self.run_id)
        self.store.update_run(self.run_id, status="running")
        try:
            while True:
                status = self._next_status()
                if status:
                    self.store.update_run(self.run_id, status=status)
                    return status
                self._round(len(self.completed_rounds()) + 1)
        except ProblemError as e:
            self.store.update_run(self.run_id, status="failed", note=str(e))
            return "failed"

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
        code = self.store.read_text(self.run_id, prev, "program.py")
        rec = self.recommendation(prev)
        if gate.get("action") == "edit_recommendation" and gate.get("recommendation"):
            rec = Recommendation.from_dict({**gate["recommendation"], "edited_by_user": True})
        return code, self.result(prev), rec, gate

    def _round(self, idx: int) -> None:
        s, rid = self.store, self.run_id
        code, prev_result, rec, gate = self._inputs_for(idx)
        s.set_round(rid, idx, "generating")
        if gate.get("action") == "edit_code" and gate.get("code"):
            program, failure = gate["code"], ""
            s.write_json(rid, idx, "generation.json", {"source": "edited by the user at the gate"})
        else:
            ref = self.config.reference_kernel
            out = self.gen.generate(GenerationRequest(
                self.problem, self.backend, idx, code, prev_result, rec,
                ReferenceKernel(ref["backend"], ref["code"]) if ref else None))
            s.write_json(rid, idx, "generation_prompt.json", [{"role": m.role, "text": m.text} for m in out.messages])
            s.write_text(rid, idx, "generation_answer.txt", out.answer)
            s.write_json(rid, idx, "generation.json", {"failure": out.failure, "notes": out.notes,
                                                       "usage": asdict(out.usage), "model": out.model,
                                                       "seconds": out.seconds,
                                                       "provider": self.gen.provider.label})
            program, failure = out.program, out.failure
        if program is None:
            result = EvalResult(Verdict.GENERATION_FAILURE, [failure], problem=self.problem.name,
                                backend=self.backend.name, stage="generation")
        else:
            s.write_text(rid, idx, "program.py", program)
            s.set_round(rid, idx, "evaluating")
            result = self.executor.evaluate(self.problem, program, self.backend.name, self.settings)
        s.write_json(rid, idx, "eval.json", result.to_dict())
        speedup = result.speedup("eager") if result.correct else None
        s.set_round(rid, idx, "evaluated", result.verdict.value, speedup)
        self._update_best(idx, speedup)
        if result.correct:
            skip = gate.get("action") == "skip_profiling"
            report = report_from_eval(result) if skip else self._profile(idx, program, result)
            s.write_json(rid, idx, "profile.json", report.to_dict())
            self._analyse(idx, program, result, report)
        gated = self.config.mode == "gated" and idx < self.config.max_rounds
        s.set_round(rid, idx, "gate" if gated else "done")
        s.update_run(rid, rounds_done=len(self.completed_rounds()))

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
            self.store.write_text(self.run_id, idx, "ncu/ncu_details.csv", ncu_csv)
        base.notes += notes
        if report is None:
            return base
        report.metrics = base.metrics + report.metrics
        report.notes = base.notes + report.notes
        return report

    def _load_report(self, idx: int) -> ProfileReport:
        d = self.store.read_json(self.run_id, idx, "profile.json") or {"tool": "none"}
        images = [ImageData(p.read_bytes(), "image/png", p.stem[3:]) for p in self.store.images(self.run_id, idx)]
        return ProfileReport.from_dict(d, images)

    def _analyse(self, idx: int, program: str, result: EvalResult, report: ProfileReport) -> None:
        s, rid = self.store, self.run_id
        report.images = report.images or self._load_report(idx).images
        history = []
        for r in s.rounds(rid):
            if r["idx"] < idx:
                rec = self.recommendation(r["idx"])
                history.append({"round": r["idx"], "verdict": r["verdict"], "speedup": r["speedup"],
                                "recommendation": rec.title if rec else ""})
        s.set_round(rid, idx, "analysing")
        out = self.ana.analyze(AnalysisRequest(self.problem, self.backend, program, result, report, idx, history))
        s.write_json(rid, idx, "analysis_prompt.json", [{"role": m.role, "text": m.text, "images": len(m.images)}
                                                         for m in out.messages])
        s.write_text(rid, idx, "analysis_answer.txt", out.answer)
        s.write_json(rid, idx, "analysis.json", {"error": out.error, "usage": asdict(out.usage),
                                                 "images_sent": out.images_sent, "images_omitted": out.images_omitted,
                                                 "provider": self.ana.provider.label})
        if out.recommendation:
            s.write_json(rid, idx, "recommendation.json", out.recommendation.to_dict())

    # -- export ----------------------------------------------------------------------------------------------
    def best_kernel_source(self) -> str | None:
        return self.store.best_kernel_source(self.run_id)


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)[:40] or "screenshot"
