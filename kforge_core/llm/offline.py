"""Providers that need no model service: scripted answers (tests, offline demos) and manual paste-in."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable

from kforge_core.llm.base import Cancelled, Completion, LLMError, Message, Provider, Usage


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)  # ~4 characters a token: an estimate, labelled as such where shown


def render_transcript(messages: list[Message]) -> str:
    """The prompt as one readable text, for people who paste it into a chat UI."""
    parts = []
    for m in messages:
        parts.append(f"### {m.role.upper()}\n\n{m.text}")
        parts += [f"[image attached: {i.label or i.mime}, {len(i.data)} bytes]" for i in m.images]
    return "\n\n".join(parts)


class ScriptedProvider(Provider):
    """Replays prepared answers in order, one per step of the run (a re-analysis of a round gets that
    round's answer again). Always labelled 'scripted' so nobody mistakes it for a model."""

    name = "scripted"

    def __init__(self, answers: list[str], model: str = "scripted-demo", **kw):
        super().__init__(model, max_retries=0, **kw)
        self.answers = list(answers)
        self.next_answer = 0
        self.calls: list[list[Message]] = []

    @classmethod
    def from_file(cls, path: str | Path, role: str | None = None) -> "ScriptedProvider":
        """A JSON list of answers, {"answers": [...]}, or with `role`, {"generation": [...], "analysis": [...]}."""
        p = Path(path)
        try:
            data = json.loads(p.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise LLMError(f"{p}: cannot read scripted answers ({e})") from None
        if isinstance(data, dict):
            # a role-keyed file may hold no answers for a role (e.g. no analysis when no round is correct)
            answers = data.get(role, data.get("answers", [])) if role else data.get("answers")
        else:
            answers = data
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            raise LLMError(f"{p}: expected a JSON list of answer strings (or {{\"answers\": [...]}})")
        return cls(answers, model=f"scripted:{p.name}" + (f":{role}" if role else ""))

    def resume_after(self, answers_used: int) -> None:
        """The run's steps before this one used this many answers: the next call gets the one after."""
        self.next_answer = answers_used

    def _complete_once(self, messages: list[Message]) -> Completion:
        self.calls.append(messages)
        if self.next_answer >= len(self.answers):
            raise LLMError(f"scripted provider {self.model}: no answer left (it holds {len(self.answers)})")
        text = self.answers[self.next_answer]
        self.next_answer += 1
        usage = Usage(sum(_estimate_tokens(m.text) for m in messages), _estimate_tokens(text), 0.0)
        return Completion(text, usage, self.model, self.name, "scripted")


class ManualProvider(Provider):
    """Paste-in: the prompt is written out (or handed to `answer_fn`), a person answers in any chat UI.

    With `answer_fn` (the app, or a CLI reading stdin) the answer comes back from it. Without, the prompt
    goes to PROMPT_DIR/NNN_prompt.md and the answer is read from PROMPT_DIR/NNN_answer.md once it appears.
    """

    name = "manual"

    def __init__(self, prompt_dir: str | Path | None = None, answer_fn: Callable[[str], str] | None = None,
                 wait_s: float = 3600.0, poll_s: float = 0.5, model: str = "manual", **kw):
        super().__init__(model, max_retries=0, **kw)
        self.prompt_dir = Path(prompt_dir) if prompt_dir else None
        self.answer_fn, self.wait_s, self.poll_s = answer_fn, wait_s, poll_s
        self.count = 0
        self.cancelled: Callable[[], bool] = lambda: False  # the session's Stop (Session sets it)

    def _complete_once(self, messages: list[Message]) -> Completion:
        self.count += 1
        prompt = render_transcript(messages)
        if self.answer_fn is not None:
            text = self.answer_fn(prompt)
        elif self.prompt_dir is not None:
            text = self._exchange_files(prompt)
        else:
            raise LLMError("manual provider: give a prompt folder or an answer callback")
        if not text or not text.strip():
            raise LLMError("manual provider: the pasted answer is empty")
        usage = Usage(_estimate_tokens(prompt), _estimate_tokens(text), None)
        return Completion(text, usage, self.model, self.name, "manual")

    def _exchange_files(self, prompt: str) -> str:
        self.prompt_dir.mkdir(parents=True, exist_ok=True)
        stem = f"{self.count:03d}"
        (self.prompt_dir / f"{stem}_prompt.md").write_text(prompt)
        answer = self.prompt_dir / f"{stem}_answer.md"
        deadline = time.monotonic() + self.wait_s
        while time.monotonic() < deadline:
            if self.cancelled():
                raise Cancelled(f"stopped by the user while waiting for {answer.name}")
            if answer.exists() and answer.stat().st_size > 0:
                time.sleep(self.poll_s)  # let a writer finish
                return answer.read_text(errors="replace")
            time.sleep(self.poll_s)
        raise LLMError(f"manual provider: no answer in {answer} within {self.wait_s:g} s")


def scripted_from_config(cfg, secrets=None, workdir=None, **extra) -> ScriptedProvider:
    if not cfg.scripted_path:
        raise LLMError("the scripted provider needs a file of answers")
    return ScriptedProvider.from_file(cfg.scripted_path, cfg.scripted_role)


def manual_from_config(cfg, secrets=None, workdir=None, **extra) -> ManualProvider:
    """Prompts and answers go through files in `workdir` (the run's folder for this role), so a pasted answer
    survives an app restart; a person has a day to answer."""
    folder = workdir or cfg.manual_dir
    return ManualProvider(prompt_dir=folder, **({"wait_s": 24 * 3600} if workdir else {}), **extra)
