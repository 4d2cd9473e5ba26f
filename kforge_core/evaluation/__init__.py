"""Evaluation: (problem, candidate source, backend, settings) -> EvalResult, in four rooms.

`building/` turns a source into a loaded module, `isolation/` runs the worker in a child process that cannot
hurt the caller, `worker/` is what runs inside that child (its stages), `judging/` holds the rules and the
measurements a verdict rests on. Beside them: `evaluator` (the entry point, the only module that sees every
room), and the shared vocabulary every room may import: `result`, `settings`, `outcome`.
tests/test_repo_hygiene.py checks who may import whom.
"""

from kforge_core.evaluation.evaluator import check_problem, evaluate
from kforge_core.evaluation.result import EvalResult, TimingStats, TrialResult, Verdict
from kforge_core.evaluation.settings import EvalSettings

__all__ = ["evaluate", "check_problem", "EvalResult", "EvalSettings", "TimingStats", "TrialResult", "Verdict"]
