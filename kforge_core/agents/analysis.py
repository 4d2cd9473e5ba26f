"""The performance-analysis agent: ProfileReport (+ screenshots) and current code in, ONE structured
recommendation out."""

from __future__ import annotations

from dataclasses import dataclass, field

from kforge_core.agents.parsing import Recommendation, RecommendationError, parse_recommendation
from kforge_core.agents.prompts import PromptLibrary
from kforge_core.backends import Backend
from kforge_core.evaluation.result import EvalResult
from kforge_core.llm.base import LLMError, Message, Provider, Usage, call_record
from kforge_core.problems import Problem
from kforge_core.profile import ProfileReport


@dataclass
class AnalysisRequest:
    problem: Problem
    backend: Backend
    code: str
    result: EvalResult
    report: ProfileReport
    round_index: int = 1
    history: list[dict] = field(default_factory=list)  # {round, verdict, speedup, recommendation}


@dataclass
class AnalysisOutcome:
    recommendation: Recommendation | None
    error: str = ""
    messages: list[Message] = field(default_factory=list)
    answer: str = ""
    usage: Usage = field(default_factory=Usage)
    images_sent: int = 0
    images_omitted: int = 0
    call: dict = field(default_factory=dict)  # call_record() of the model call


class AnalysisAgent:
    def __init__(self, provider: Provider, prompts: PromptLibrary | None = None):
        self.provider = provider
        self.prompts = prompts or PromptLibrary()

    def build_messages(self, req: AnalysisRequest) -> tuple[list[Message], int, int]:
        images = list(req.report.images)
        send = images if self.provider.supports_images else []
        omitted = len(images) - len(send)
        system = self.prompts.render("analysis_system.j2", backend=req.backend)
        user = self.prompts.render("analysis.j2", problem=req.problem, code=req.code, round_index=req.round_index,
                                   verdict=req.result.verdict.value, report_text=req.report.render_text(),
                                   images_omitted=omitted, n_images=len(send), history=req.history)
        return [Message("system", system), Message("user", user, images=send)], len(send), omitted

    def analyze(self, req: AnalysisRequest) -> AnalysisOutcome:
        messages, sent, omitted = self.build_messages(req)
        try:
            c = self.provider.complete(messages)
        except LLMError as e:
            return AnalysisOutcome(None, f"the model call failed: {e}", messages, images_sent=sent,
                                   images_omitted=omitted)
        call = call_record(c, self.provider.label)
        try:
            rec = parse_recommendation(c.text)
        except RecommendationError as e:
            return AnalysisOutcome(None, str(e), messages, c.text, c.usage, sent, omitted, call)
        return AnalysisOutcome(rec, "", messages, c.text, c.usage, sent, omitted, call)
