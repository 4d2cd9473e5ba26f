"""`kforge check`: does each reference of a problem set run on this backend, how much device memory does it
peak at, how fast is it in eager and under torch.compile, and how does that compare with a published
baseline (KernelBench's baseline_time_torch_H100.json format: level -> file name -> {"mean": ms, ...}).
What a user runs first on a new GPU box."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from kforge_core.backends import get_backend
from kforge_core.evaluation import EvalSettings
from kforge_core.evaluation.evaluator import reference_run
from kforge_core.problems import Problem, ProblemError

CHECK_CSV, CHECK_MD = "check.csv", "check.md"


@dataclass
class CheckRow:
    problem: str
    status: str  # "ok", "problem_error", or the verdict that stopped it (does_not_fit, harness_error, timeout...)
    message: str = ""
    peak_mb: float | None = None  # the reference's peak device memory (CUDA backends)
    eager_ms: float | None = None
    compiled_ms: float | None = None
    baseline_ms: float | None = None
    eager_vs_baseline: float | None = None  # > 1: slower here than the published figure


def baseline_for(problem: Problem, baseline: dict | None) -> float | None:
    if not baseline or problem.level is None:
        return None
    entry = baseline.get(f"level{problem.level}", {}).get(Path(problem.path).name)
    return entry.get("mean") if isinstance(entry, dict) else None


def check_one(problem: Problem, backend: str, settings: EvalSettings, baseline: dict | None = None) -> CheckRow:
    row = CheckRow(problem.name, "ok", baseline_ms=baseline_for(problem, baseline))
    try:
        r = reference_run(problem, get_backend(backend), settings)
    except ProblemError as e:
        row.status, row.message = "problem_error", str(e)
        return row
    if not r.correct:
        row.status, row.message = r.verdict.value, " ".join(r.messages[:1])
    row.peak_mb = r.memory.get("reference_peak_mb")
    if "eager" in r.timings:
        row.eager_ms = r.timings["eager"].median_ms
    if "compiled" in r.timings:
        row.compiled_ms = r.timings["compiled"].median_ms
    if row.eager_ms and row.baseline_ms:
        row.eager_vs_baseline = row.eager_ms / row.baseline_ms
    return row


def load_baseline(path: str | Path) -> dict:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise ProblemError(f"{path}: cannot read the baseline file ({e})") from None
    if not isinstance(data, dict):
        raise ProblemError(f"{path}: expected {{level: {{file name: {{mean: ms}}}}}}")
    return data


def rows_csv(rows: list[CheckRow]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(CheckRow.__dataclass_fields__))
    w.writeheader()
    for r in rows:
        w.writerow(asdict(r))
    return buf.getvalue()


def rows_markdown(rows: list[CheckRow], title: str) -> str:
    def f(x):
        return "—" if x is None else f"{x:.3g}" if isinstance(x, float) else str(x)

    ok = sum(r.status == "ok" for r in rows)
    lines = [f"# {title}", "", f"{ok} of {len(rows)} references run.", "",
             "| problem | status | peak MiB | eager ms | compiled ms | baseline ms | eager / baseline | message |",
             "| --- " * 8 + "|"]
    lines += [f"| {r.problem} | {r.status} | {f(r.peak_mb)} | {f(r.eager_ms)} | {f(r.compiled_ms)} | "
              f"{f(r.baseline_ms)} | {f(r.eager_vs_baseline)} | {r.message.replace('|', '/')[:200]} |" for r in rows]
    return "\n".join(lines) + "\n"


def write_reports(rows: list[CheckRow], out: str | Path, title: str) -> None:
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    (d / CHECK_CSV).write_text(rows_csv(rows))
    (d / CHECK_MD).write_text(rows_markdown(rows, title))


def read_report(folder: str | Path) -> list[dict] | None:
    """check.csv of an earlier `kforge check --out FOLDER`, for the Problems page (None if absent)."""
    p = Path(folder) / CHECK_CSV
    if not p.is_file():
        return None
    with open(p, newline="") as fh:
        return list(csv.DictReader(fh))
