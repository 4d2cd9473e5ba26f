"""ProfileReport: what the performance-analysis agent reads, whatever tool produced it."""

from __future__ import annotations

from dataclasses import dataclass, field

from kforge_core.evaluation.result import EvalResult
from kforge_core.llm.base import ImageData

MAX_PROMPT_CHARS = 7000  # ~2k tokens


@dataclass
class Metric:
    name: str
    value: float | str
    unit: str = ""
    note: str = ""

    def render(self) -> str:
        v = f"{self.value:.4g}" if isinstance(self.value, float) else str(self.value)
        return f"- {self.name}: {v}{(' ' + self.unit) if self.unit else ''}{(' (' + self.note + ')') if self.note else ''}"


@dataclass
class ProfileReport:
    tool: str  # "ncu", "torch.profiler", "nsys", "evaluator timings", "screenshots"
    metrics: list[Metric] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)  # the tool's own rule messages
    kernels: list[dict] = field(default_factory=list)  # per-kernel rows: name, time, share, ...
    images: list[ImageData] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def render_text(self, limit: int = MAX_PROMPT_CHARS) -> str:
        lines = [f"Source: {self.tool}"]
        if self.metrics:
            lines += ["Metrics:"] + [m.render() for m in self.metrics]
        if self.kernels:
            lines.append("Kernels (by time):")
            for k in self.kernels[:12]:
                lines.append("- " + ", ".join(f"{key}={val}" for key, val in k.items()))
        if self.findings:
            lines += ["Tool findings:"] + [f"- {f}" for f in self.findings[:10]]
        if self.images:
            lines.append(f"Screenshots attached: {', '.join(i.label or i.mime for i in self.images)}")
        lines += [f"Note: {n}" for n in self.notes]
        text = "\n".join(lines)
        return text if len(text) <= limit else text[:limit] + "\n[report truncated]"

    def table_rows(self) -> list[dict]:
        """The metrics as rows for a UI table."""
        return [{"metric": m.name, "value": m.value if isinstance(m.value, str) else round(m.value, 4),
                 "unit": m.unit, "note": m.note} for m in self.metrics]

    def percent_metrics(self) -> dict[str, float]:
        """Metrics given as a share of peak (SpeedOfLight, occupancy, hit rates): the bars of a UI chart."""
        return {m.name: float(m.value) for m in self.metrics
                if m.unit == "%" and isinstance(m.value, (int, float))}

    def to_dict(self) -> dict:
        return {"tool": self.tool, "metrics": [vars(m) for m in self.metrics], "findings": self.findings,
                "kernels": self.kernels, "notes": self.notes,
                "images": [{"mime": i.mime, "label": i.label, "bytes": len(i.data)} for i in self.images]}

    @classmethod
    def from_dict(cls, d: dict, images: list[ImageData] | None = None) -> "ProfileReport":
        """Back from to_dict() (image bytes are stored beside the report, so they come in separately)."""
        return cls(d.get("tool", "?"), [Metric(**m) for m in d.get("metrics", [])], list(d.get("findings", [])),
                   list(d.get("kernels", [])), list(images or []), list(d.get("notes", [])))


def report_from_eval(result: EvalResult) -> ProfileReport:
    """The profile every backend has: the evaluator's own timings."""
    metrics = []
    for name in ("candidate", "eager", "compiled"):
        t = result.timings.get(name)
        if t:
            metrics.append(Metric(f"{name} time (median)", t.median_ms, "ms",
                                  f"IQR {t.q1_ms:.4g}-{t.q3_ms:.4g} ms, {t.reps} reps"))
    for base in ("eager", "compiled"):
        s = result.speedup(base)
        if s is not None:
            metrics.append(Metric(f"speedup vs {base}", s, "x"))
    env = result.environment
    notes = [f"device {env.get('device', '?')} ({env.get('gpu') or env.get('cpu', '?')}), "
             f"{env.get('threads', '?')} threads"] if env else []
    return ProfileReport("evaluator timings", metrics=metrics, notes=notes)
