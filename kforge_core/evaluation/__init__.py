from kforge_core.evaluation.evaluator import check_problem, evaluate
from kforge_core.evaluation.result import EvalResult, TimingStats, TrialResult, Verdict
from kforge_core.evaluation.settings import EvalSettings

__all__ = ["evaluate", "check_problem", "EvalResult", "EvalSettings", "TimingStats", "TrialResult", "Verdict"]
