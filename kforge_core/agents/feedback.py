"""What the generation agent is told about its previous attempt: what matters, trimmed."""

from __future__ import annotations

from kforge_core.evaluation.result import EvalResult, Verdict

BUILD_LOG_CHARS = 3000
STDERR_CHARS = 1500


def _tail(text: str, n: int) -> str:
    text = text.strip()
    return text if len(text) <= n else "[...]\n" + text[-n:]


def feedback_from_result(r: EvalResult) -> dict:
    fb = {"verdict": r.verdict.value, "messages": r.messages[:6], "build_log": "", "trials": [], "timings": {},
          "speedup": r.speedup("eager"), "stderr": "", "flags": list(r.flags)}
    if r.verdict == Verdict.COMPILE_ERROR:
        fb["build_log"] = r.build_log[:BUILD_LOG_CHARS]
    if r.verdict in (Verdict.NUMERICAL_MISMATCH, Verdict.SHAPE_MISMATCH, Verdict.CORRECT):
        fb["trials"] = [vars(t) for t in r.trials]
    if r.verdict in (Verdict.RUNTIME_ERROR, Verdict.TIMEOUT) and r.stderr_tail.strip():
        fb["stderr"] = _tail(r.stderr_tail, STDERR_CHARS)
    fb["timings"] = {name: t.median_ms for name, t in r.timings.items()}
    fb["whose_work"] = ""
    if r.attribution.get("replaced_share") is not None:
        from kforge_core.evaluation.judging.attribution import describe

        fb["whose_work"] = describe(r.attribution)
    return fb
