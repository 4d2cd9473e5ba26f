"""What a run has recorded, read back from the store; and the two writes a person makes at a gate.

Pages and the CLI hold a RunRecord (no providers, nothing that runs a model or deletes); the Session adds
the loop on top of it.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import asdict, dataclass

from kforge_core import artifacts as A
from kforge_core.agents.parsing import Recommendation
from kforge_core.evaluation import EvalResult
from kforge_core.llm.base import ImageData
from kforge_core.store import Store

GATE_ACTIONS = ("accept", "edit_recommendation", "edit_code", "skip_profiling", "stop")
FINISHED_PHASES = ("done", "gate")  # a round in any other phase is in flight (or was, when its process died)


@dataclass
class GateDecision:
    action: str  # one of GATE_ACTIONS
    recommendation: dict | None = None  # edited recommendation
    code: str | None = None  # edited program: evaluated as the next round's candidate

    def __post_init__(self):
        if self.action not in GATE_ACTIONS:
            raise ValueError(f"unknown gate action {self.action!r}; one of {GATE_ACTIONS}")


class RunRecord:
    def __init__(self, store: Store, run_id: str):
        self.store, self.run_id = store, run_id

    def completed_rounds(self) -> list[int]:
        return [r["idx"] for r in self.store.rounds(self.run_id) if r["phase"] in FINISHED_PHASES]

    def round_in_flight(self) -> int | None:
        """The round a resumed run must finish first (the highest one not in a finished phase)."""
        unfinished = [r["idx"] for r in self.store.rounds(self.run_id) if r["phase"] not in FINISHED_PHASES]
        return unfinished[-1] if unfinished else None

    def program(self, idx: int) -> str | None:
        return self.store.read_text(self.run_id, idx, A.PROGRAM)

    def result(self, idx: int) -> EvalResult | None:
        d = self.store.read_json(self.run_id, idx, A.EVAL)
        return EvalResult.from_dict(d) if d else None

    def recommendation(self, idx: int) -> Recommendation | None:
        d = self.store.read_json(self.run_id, idx, A.RECOMMENDATION)
        return Recommendation.from_dict(d) if d else None

    def gate(self, idx: int) -> dict | None:
        return self.store.read_json(self.run_id, idx, A.GATE)

    def awaiting_gate(self) -> int | None:
        rounds = self.store.rounds(self.run_id)
        if rounds and rounds[-1]["phase"] == "gate" and self.gate(rounds[-1]["idx"]) is None:
            return rounds[-1]["idx"]
        return None

    def progress(self, idx: int, now: float | None = None) -> str:
        """What round `idx` is doing, in words: its phase, the evaluation's stage and trial, seconds spent,
        and what the same stage took in this run's earlier rounds (a measured estimate, when there is one)."""
        now = time.time() if now is None else now
        row = next((r for r in self.store.rounds(self.run_id) if r["idx"] == idx), None)
        if row is None:
            return "starting"
        text = f"{row['phase']}"
        if row["phase"] == "evaluating":
            try:
                p = json.loads(self.store.read_text(self.run_id, idx, A.EVAL_PROGRESS) or "")
            except ValueError:
                p = None
            if p:
                stage = p["stage"]
                text += f": {stage}" + (f", trial {p['trial']}/{p['of']}" if "trial" in p else "")
                text += f", {now - p['stage_started']:.0f} s in this stage"
                earlier = [s for i in self.completed_rounds() if i < idx and (r := self.result(i))
                           and (s := r.stage_seconds.get(stage)) is not None]
                if earlier:
                    text += f" (earlier rounds: {statistics.median(earlier):.0f} s)"
        if row.get("started"):
            text += f" · {now - row['started']:.0f} s in this round"
        return text

    def model_calls(self) -> list[dict]:
        """Every model call of the run, in order: round, role and call_record() fields."""
        calls = []
        for r in self.store.rounds(self.run_id):
            for role, name in (("generation", A.GENERATION), ("analysis", A.ANALYSIS)):
                call = (self.store.read_json(self.run_id, r["idx"], name) or {}).get("call")
                if call:
                    calls.append({"round": r["idx"], "role": role, **call})
        return calls

    # -- the person's writes at a gate ------------------------------------------------------------------
    def decide(self, idx: int, decision: GateDecision) -> None:
        self.store.write_json(self.run_id, idx, A.GATE, asdict(decision))
        self.store.set_round(self.run_id, idx, "done")
        if decision.action == "stop":
            self.store.update_run(self.run_id, status="stopped", note="stopped at the gate")

    def add_screenshots(self, idx: int, images: list[ImageData]) -> None:
        for n, img in enumerate(images, len(self.store.images(self.run_id, idx)) + 1):
            self.store.write_bytes(self.run_id, idx, A.image_name(n, img.label), img.data)
