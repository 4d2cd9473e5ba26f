"""What an evaluation returns: a verdict plus everything a human (or an agent) needs to act on it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum


class Verdict(str, Enum):
    GENERATION_FAILURE = "generation_failure"  # the agent produced no program
    STATIC_REJECTED = "static_rejected"  # the program breaks a rule before it is run
    COMPILE_ERROR = "compile_error"
    RUNTIME_ERROR = "runtime_error"  # exceptions, crashes (signals), memory limit
    TIMEOUT = "timeout"
    SHAPE_MISMATCH = "shape_mismatch"  # structure: nesting, shape or dtype differ
    NUMERICAL_MISMATCH = "numerical_mismatch"
    REJECTED = "rejected"  # an anti-cheat rule was broken at run time (the rule and the evidence say which)
    HARNESS_ERROR = "harness_error"  # KForge's own code failed: not the candidate's fault, not counted against it
    DOES_NOT_FIT = "does_not_fit"  # the problem and a candidate cannot both fit this device's memory
    CORRECT = "correct"

    @property
    def candidates_fault(self) -> bool:
        """Whether the verdict is about the candidate (and the generation agent should act on it)."""
        return self not in (Verdict.HARNESS_ERROR, Verdict.DOES_NOT_FIT)


@dataclass
class TrialResult:
    seed: int
    passed: bool
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    mismatch_fraction: float | None = None
    worst: str = ""  # where the worst element is and its two values
    note: str = ""
    error_model: dict | None = None  # how values were judged: float64 reference (errors, allowances) or fixed


@dataclass
class TimingStats:
    median_ms: float
    q1_ms: float
    q3_ms: float
    min_ms: float
    max_ms: float
    mean_ms: float
    std_ms: float
    reps: int
    host_ms: float | None = None  # the host's launch time of one call (CUDA: median, measured in warm-up)

    @property
    def cv(self) -> float:
        return self.std_ms / self.mean_ms if self.mean_ms else 0.0


@dataclass
class EvalResult:
    verdict: Verdict
    messages: list[str] = field(default_factory=list)  # first one is the headline
    problem: str = ""
    backend: str = ""
    stage: str = ""  # the last stage the worker reached
    trials: list[TrialResult] = field(default_factory=list)
    timings: dict[str, TimingStats] = field(default_factory=dict)  # candidate / eager / compiled
    timing_errors: dict[str, str] = field(default_factory=dict)  # e.g. torch.compile failing on this machine
    interpreted: bool = False  # correctness only (e.g. Triton interpreter): no timings
    flags: list[str] = field(default_factory=list)  # correct, but to be reviewed (e.g. implausible speedup)
    timing_notes: list[str] = field(default_factory=list)  # how a timing was obtained (e.g. reused baseline)
    build_notes: list[str] = field(default_factory=list)  # how the build was sped up (fast_build.py)
    environment: dict = field(default_factory=dict)
    build_log: str = ""  # trimmed compiler output
    stdout_tail: str = ""
    stderr_tail: str = ""
    duration_s: float = 0.0
    stage_seconds: dict[str, float] = field(default_factory=dict)
    detail_seconds: dict[str, float] = field(default_factory=dict)  # e.g. anti-cheat profiler, environment
    memory: dict[str, float] = field(default_factory=dict)  # MiB: reference_peak, evaluation_peak, inputs, outputs
    own_kernel_share: float | None = None  # of the candidate's device time (CPU: time outside PyTorch operators)
    # whose work the speedup is (judging/attribution.py): replaced_share, kept, replaced, substituted; policy
    attribution: dict = field(default_factory=dict)

    @property
    def correct(self) -> bool:
        return self.verdict == Verdict.CORRECT

    @property
    def timing_unstable(self) -> bool:
        """Other load on the machine disturbed the timing: the speedup is shown, never celebrated (it is not
        a run's best, and bench tables leave it out of fast_p above 0)."""
        return any(f.startswith("unstable timing") for f in self.flags)

    @property
    def speedup_counted(self) -> bool:
        """Correct and nothing flagged: only then does a speedup count (a run's best, bench fast_p above 0).
        Evidence strong enough to flag a timing is strong enough to withhold the speedup."""
        return self.correct and not self.flags

    def speedup(self, baseline: str = "eager") -> float | None:
        b, c = self.timings.get(baseline), self.timings.get("candidate")
        if not b or not c or c.median_ms <= 0:
            return None
        return b.median_ms / c.median_ms

    def speedup_range(self, baseline: str = "eager") -> tuple[float, float] | None:
        """Speedup spread from the interquartile ranges: (pessimistic, optimistic)."""
        b, c = self.timings.get(baseline), self.timings.get("candidate")
        if not b or not c or c.q1_ms <= 0 or c.q3_ms <= 0:
            return None
        return b.q1_ms / c.q3_ms, b.q3_ms / c.q1_ms

    def to_dict(self) -> dict:
        d = asdict(self)
        d["verdict"] = self.verdict.value
        d["speedup_vs_eager"] = self.speedup("eager")
        d["speedup_vs_compiled"] = self.speedup("compiled")
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "EvalResult":
        d = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        d["verdict"] = Verdict(d["verdict"])
        d["trials"] = [TrialResult(**t) for t in d.get("trials", [])]
        d["timings"] = {k: TimingStats(**v) for k, v in d.get("timings", {}).items()}
        return cls(**d)
