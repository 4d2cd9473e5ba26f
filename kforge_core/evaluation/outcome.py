"""How a stage stops an evaluation: Outcome (a verdict for the candidate, or for the harness) and
ProblemFailure (the problem file itself is broken)."""

from __future__ import annotations

import traceback

from kforge_core.evaluation.result import Verdict


class ProblemFailure(Exception):
    """The reference problem itself is broken (not the candidate's fault)."""


class Outcome(Exception):
    """Stop evaluating with this verdict."""

    def __init__(self, verdict: Verdict, *messages: str, build_log: str = ""):
        super().__init__(messages[0] if messages else verdict.value)
        self.verdict, self.messages, self.build_log = Verdict(verdict), list(messages), build_log


def traceback_tail(e: BaseException, lines: int = 6) -> str:
    return "".join(traceback.format_exception(type(e), e, e.__traceback__)[-lines:]).strip()


def gib(nbytes: float) -> str:
    return f"{nbytes / 2**30:.2f} GiB"
