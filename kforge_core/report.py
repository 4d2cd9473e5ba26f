"""Plain-text rendering of an EvalResult, shared by the CLI and the prompts."""

from __future__ import annotations

from kforge_core.evaluation.result import EvalResult


def _fmt(x: float | None, spec: str = ".3g") -> str:
    return "-" if x is None else format(x, spec)


def verdict_table(r: EvalResult) -> str:
    lines = [f"problem   {r.problem}", f"backend   {r.backend}", f"verdict   {r.verdict.value}"]
    lines += [f"          {m}" for m in r.messages[:5]]
    if r.trials:
        lines.append("")
        lines.append(f"{'trial':<7}{'seed':<7}{'pass':<6}{'max abs err':<14}{'max rel err':<14}{'mismatch':<10}")
        for i, t in enumerate(r.trials, 1):
            mism = "-" if t.mismatch_fraction is None else f"{t.mismatch_fraction:.2%}"
            lines.append(f"{i:<7}{t.seed:<7}{'yes' if t.passed else 'NO':<6}{_fmt(t.max_abs_err):<14}"
                         f"{_fmt(t.max_rel_err):<14}{mism:<10}")
    if r.timings:
        lines.append("")
        lines.append(f"{'timing':<11}{'median ms':<12}{'IQR ms':<20}{'reps':<6}")
        for name in ("candidate", "eager", "compiled"):
            t = r.timings.get(name)
            if t:
                lines.append(f"{name:<11}{t.median_ms:<12.4g}{f'{t.q1_ms:.4g}-{t.q3_ms:.4g}':<20}{t.reps:<6}")
        for base in ("eager", "compiled"):
            s, rng = r.speedup(base), r.speedup_range(base)
            if s is not None:
                lines.append(f"speedup vs {base}: {s:.2f}x (IQR {rng[0]:.2f}-{rng[1]:.2f}x)")
    for name, err in r.timing_errors.items():
        lines.append(f"{name} reference not timed: {err[:300]}")
    for n in r.timing_notes:
        lines.append(f"note: {n}")
    if r.stage_seconds.get("build") is not None:
        lines.append(build_summary(r))
    for n in r.build_notes:
        lines.append(f"build: {n}")
    if r.own_kernel_share is not None:
        lines.append(f"own-kernel share of the candidate's time: {r.own_kernel_share:.0%}")
    if attribution_summary(r):
        lines.append(attribution_summary(r))
    if error_model_summary(r):
        lines.append(error_model_summary(r))
    for f in r.flags:
        lines.append(f"FLAGGED FOR REVIEW: {f}")
    if r.flags and r.correct and r.timings:
        lines.append("speedup not counted (a run's best, fast_p) while flagged")
    if r.interpreted:
        lines.append("interpreted run: correctness only, no timings")
    if r.build_log:
        lines += ["", "compiler output (trimmed):", r.build_log[:3000]]
    env = r.environment
    if env:
        lines += ["", f"environment: {env.get('device', '?')} | {env.get('gpu') or env.get('cpu', '?')} | "
                      f"torch {env.get('torch', '?')} | python {env.get('python', '?')}"]
    lines.append(f"took {r.duration_s:.1f} s")
    return "\n".join(lines)


def attribution_summary(r) -> str:
    """Whose work the speedup is, and the policy it was judged by (judging/attribution.py)."""
    a = r.attribution or {}
    if a.get("replaced_share") is None:
        return ""
    policy = {"partial": "own kernels must replace part of the reference's work",
              "all": "all compute in own kernels"}.get(a.get("policy", ""), a.get("policy", ""))
    return (f"whose work: own kernels replaced {a['replaced_share']:.0%} of the reference's operator time, "
            f"{len(a.get('kept', []))} operator(s) kept from PyTorch/the library (policy: {policy})")


def error_model_summary(r) -> str:
    """How the values were judged: the measured error against its allowance, worst over trials and outputs."""
    models = [t.error_model for t in r.trials if getattr(t, "error_model", None)]
    if not models:
        return ""
    if all(m.get("model") != "float64 reference" for m in models):
        return f"values judged by the fixed tolerance: {models[0].get('why', '')}"
    leaves = [leaf for m in models for leaf in m.get("leaves", [])]
    worst = max(leaves, key=lambda x: x["norm_error"] / x["norm_allowance"] if x["norm_allowance"] else 0.0)
    return (f"values judged against a float64 run of the reference: worst norm-wise error {worst['norm_error']:.3g} "
            f"of an allowance {worst['norm_allowance']:.3g} ({worst['output']}; the fp32 reference's own error is "
            f"up to {worst['reference_error_max']:.3g} per element)")


def build_path(r) -> tuple[str, str]:
    """(which build ran, why): "split build" (kernels apart from torch's headers, split_build.py), or
    "load_inline" with the reason the split build did not apply; ("", "") when nothing was built."""
    for n in r.build_notes:
        if n.startswith("split build:"):
            return "split build", n.split(": ", 1)[1]
    for n in r.build_notes:
        if n.startswith("split build not used"):
            return "load_inline", n.split(": ", 1)[1] if ": " in n else n
    return ("load_inline", "") if r.stage_seconds.get("build") is not None and r.build_notes else ("", "")


def build_summary(r) -> str:
    """One line for a round or an evaluation: build seconds and path."""
    seconds = r.stage_seconds.get("build")
    if seconds is None:
        return ""
    path, why = build_path(r)
    return f"Build {seconds:.1f} s" + (f" · {path}" if path else "") + (f" ({why})" if why else "")


def build_estimate(seconds: list[float]) -> str:
    """What a user waits for while a build runs: this process's measured builds, else the recorded H100 ones
    (bench/results/2026-11-26_h100_session4)."""
    if seconds:
        ordered = sorted(seconds)
        return (f"(builds here so far: median {ordered[len(ordered) // 2]:.1f} s over {len(ordered)}, "
                f"longest {ordered[-1]:.0f} s)")
    return ("(nothing built in this app yet; measured on an H100: 1.6-2.7 s for a new source through the split "
            "build, 26-40 s when it falls back to load_inline)")


STATUS_LABELS = {"awaiting_gate": "waiting for your decision", "running": "running", "finished": "finished",
                 "stopped": "stopped", "interrupted": "interrupted", "failed": "failed"}


def status_label(status: str) -> str:
    """A run's status as a person reads it (the store keeps the identifier)."""
    return STATUS_LABELS.get(status, status.replace("_", " "))
