"""The generation agent: prompt from problem, backend, example, reference kernel, previous attempt and
recommendation; program out (or a generation_failure with the reason)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kforge_core.agents.feedback import feedback_from_result
from kforge_core.agents.parsing import Recommendation, extract_program
from kforge_core.agents.prompts import PromptLibrary
from kforge_core.backends import Backend, get_backend
from kforge_core.evaluation.result import EvalResult
from kforge_core.llm.base import Completion, LLMError, Message, Provider, Usage, call_record
from kforge_core.problems import Problem, builtin_problems

LANGUAGE_TAGS = {"cuda": "python", "triton": "python", "metal": "python", "cpu": "python"}


@dataclass
class ReferenceKernel:
    """A working program for another platform, given to transfer knowledge across platforms."""

    backend: str
    code: str

    @property
    def language_tag(self) -> str:
        return LANGUAGE_TAGS.get(self.backend, "")


@dataclass
class GenerationRequest:
    problem: Problem
    backend: Backend
    round_index: int = 1
    previous_code: str | None = None
    previous_result: EvalResult | None = None
    recommendation: Recommendation | None = None
    reference_kernel: ReferenceKernel | None = None
    kernel_policy: str = "partial"  # EvalSettings.kernel_policy: what the evaluator will accept, said in the prompt


@dataclass
class GenerationOutcome:
    program: str | None
    failure: str = ""  # set when no program came out (verdict generation_failure)
    notes: list[str] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)  # the prompt as sent
    answer: str = ""
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    seconds: float = 0.0
    call: dict = field(default_factory=dict)  # call_record(): model, finish reason, attempts, latency, tokens


def one_shot_example(backend: Backend, exclude: str = "") -> dict | None:
    """The backend's first shipped example (not for the problem at hand: that would give the answer
    away), with its problem, as a worked (problem, answer) pair."""
    by_name = {p.name: p for p in builtin_problems()}
    names = [n for n in backend.example_problems() if n != exclude and n in by_name]
    if not names:
        return None
    name = names[0]
    return {"problem": by_name[name].source.strip(), "solution": backend.example_for(name).read_text().strip()}


class GenerationAgent:
    def __init__(self, provider: Provider, prompts: PromptLibrary | None = None):
        self.provider = provider
        self.prompts = prompts or PromptLibrary()

    def build_messages(self, req: GenerationRequest) -> list[Message]:
        system = self.prompts.render("generation_system.j2", backend=req.backend, kernel_policy=req.kernel_policy)
        user = self.prompts.render(
            "generation.j2", backend=req.backend, problem=req.problem, round_index=req.round_index,
            one_shot=one_shot_example(req.backend, exclude=req.problem.name), reference_kernel=req.reference_kernel,
            previous_code=req.previous_code,
            feedback=feedback_from_result(req.previous_result) if req.previous_result else None,
            recommendation=req.recommendation)
        return [Message("system", system), Message("user", user)]

    def generate(self, req: GenerationRequest) -> GenerationOutcome:
        messages = self.build_messages(req)
        try:
            c: Completion = self.provider.complete(messages)
        except LLMError as e:
            return GenerationOutcome(None, f"the model call failed: {e}", messages=messages)
        extracted = extract_program(c.text)
        return GenerationOutcome(extracted.code, extracted.failure, extracted.notes, messages, c.text, c.usage,
                                 c.model, c.seconds, call_record(c, self.provider.label))


def reference_from_example(backend_name: str, problem_name: str) -> ReferenceKernel | None:
    """Shipped examples double as cross-platform references (e.g. the CUDA one when targeting Metal)."""
    path = get_backend(backend_name).example_for(problem_name)
    return ReferenceKernel(backend_name, path.read_text()) if path else None
