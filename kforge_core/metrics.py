"""Problem-set metrics as in the literature: correctness rate, fast_p (correct AND faster than p x the
baseline) against eager and torch.compile, geometric-mean speedup, and cost per problem."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass

P_VALUES = (0.0, 1.0, 1.5, 2.0)
BASELINES = ("eager", "compiled")


@dataclass
class ProblemOutcome:
    problem: str
    correct: bool
    speedup_eager: float | None = None
    speedup_compiled: float | None = None
    cost_usd: float | None = None
    tokens: int = 0
    sample: int = 0
    status: str = ""  # the run's status (finished, failed, ...)
    verdict: str = ""  # "correct", or the last round's verdict
    rounds: int = 0
    harness_faults: int = 0  # rounds the harness could not judge (harness_error, does_not_fit): not the candidate's
    reason: str = ""  # why it is not correct: the last evaluated round's message, or the run's note
    own_kernel_share: float | None = None  # of the best (else last correct) round's candidate time
    not_counted: str = ""  # a correct run with no counted speedup: its best measured one and why it does not count

    def speedup(self, baseline: str) -> float | None:
        return self.speedup_eager if baseline == "eager" else self.speedup_compiled


def fast_p(outcomes: list[ProblemOutcome], p: float, baseline: str = "eager") -> float:
    """Share of problems whose kernel is correct and more than p times faster than the baseline (fast_0 is
    the correctness rate: a correct kernel counts at p=0 even when it was not timed)."""
    if not outcomes:
        return 0.0
    hits = sum(1 for o in outcomes if o.correct and (p == 0 or (o.speedup(baseline) or 0.0) > p))
    return hits / len(outcomes)


def fast_p_curve(outcomes: list[ProblemOutcome], baseline: str = "eager", p_max: float = 3.0,
                 step: float = 0.05) -> tuple[list[float], list[float]]:
    """fast_p over a grid of p (for the fast_p-over-p chart)."""
    ps = [round(i * step, 6) for i in range(int(p_max / step) + 1)]
    return ps, [fast_p(outcomes, p, baseline) for p in ps]


def geomean_speedup(outcomes: list[ProblemOutcome], baseline: str = "eager") -> float | None:
    xs = [o.speedup(baseline) for o in outcomes if o.correct and o.speedup(baseline)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def summary(outcomes: list[ProblemOutcome]) -> dict:
    costs = [o.cost_usd for o in outcomes if o.cost_usd is not None]
    return {"problems": len(outcomes),
            "correct": sum(o.correct for o in outcomes),
            **{f"fast_{p:g}_{b}": fast_p(outcomes, p, b) for b in BASELINES for p in P_VALUES},
            **{f"geomean_{b}": geomean_speedup(outcomes, b) for b in BASELINES},
            "cost_usd_per_problem": sum(costs) / len(costs) if costs else None,
            "tokens_per_problem": sum(o.tokens for o in outcomes) / len(outcomes) if outcomes else 0}


def fast_p_table(outcomes: list[ProblemOutcome]) -> str:
    """fast_p per baseline as Markdown. A baseline no outcome was timed against shows n/a beyond p=0."""
    lines = ["| baseline | " + " | ".join(f"fast_{p:g}" for p in P_VALUES) + " |",
             "| --- |" + " --- |" * len(P_VALUES)]
    for b in BASELINES:
        timed = any(o.speedup(b) is not None for o in outcomes)
        cells = [f"{fast_p(outcomes, p, b):.1%}" if (p == 0 or timed) else "n/a" for p in P_VALUES]
        lines.append(f"| {b} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def speedup_table(outcomes: list[ProblemOutcome]) -> str:
    """Measured figures (they vary run to run): geometric-mean speedup, cost and tokens per problem."""
    s = summary(outcomes)
    fmt = lambda v, f: "-" if v is None else f.format(v)  # noqa: E731
    return "\n".join([
        "| correct | geomean vs eager | geomean vs torch.compile | cost / problem | tokens / problem |",
        "| --- | --- | --- | --- | --- |",
        f"| {s['correct']}/{s['problems']} | {fmt(s['geomean_eager'], '{:.2f}x')} | "
        f"{fmt(s['geomean_compiled'], '{:.2f}x')} | {fmt(s['cost_usd_per_problem'], '${:.4f}')} | "
        f"{s['tokens_per_problem']:.0f} |"])


def per_problem_table(outcomes: list[ProblemOutcome]) -> str:
    fmt = lambda v: "-" if v is None else f"{v:.2f}x"  # noqa: E731
    share = lambda v: "-" if v is None else f"{v:.0%}"  # noqa: E731
    lines = ["| problem | sample | verdict | rounds | vs eager | vs torch.compile | own-kernel share | tokens | "
             "not counted |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {o.problem} | {o.sample} | {o.verdict} | {o.rounds} | {fmt(o.speedup_eager)} | "
              f"{fmt(o.speedup_compiled)} | {share(o.own_kernel_share)} | {o.tokens} | {o.not_counted or '-'} |"
              for o in outcomes]
    return "\n".join(lines)


def markdown_table(outcomes: list[ProblemOutcome]) -> str:
    return fast_p_table(outcomes) + "\n\n" + speedup_table(outcomes)


def per_problem_csv(outcomes: list[ProblemOutcome]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["problem", "sample", "verdict", "correct", "rounds", "speedup_eager", "speedup_compiled",
                "cost_usd", "tokens", "status", "own_kernel_share", "not_counted"])
    for o in outcomes:
        w.writerow([o.problem, o.sample, o.verdict, o.correct, o.rounds, o.speedup_eager, o.speedup_compiled,
                    o.cost_usd, o.tokens, o.status, o.own_kernel_share, o.not_counted])
    return buf.getvalue()
