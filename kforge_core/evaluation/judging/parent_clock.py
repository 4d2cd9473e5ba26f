"""The verdict's cross-check against a clock the candidate cannot touch (issue 18).

The worker runs eager and the candidate back to back between two logged events (honesty.wall_blocks);
this process, which never runs candidate code, stamps those events with its own clock. Whatever a
candidate does to the timers of the worker (patched Python functions, CUDA events, statistics; native code
rewriting memory), the seconds seen here are real. A reported time far below them, or a baseline reported
far above them, is not a measurement.

Back-to-back calls differ from the timed reps in two honest ways, so the bounds leave room for both: no L2
flush between calls (faster when data fits in cache) and the host's launch time per call (slower when the
GPU work is shorter than the Python + launch path; the timed reps hide it behind a head start). The worker
reports that launch time (measured by a clock bound before the candidate was imported), so on a GPU a call
may take at most its device time plus its launch time, at every call size: a side stream's work that the
timed stream's events missed shows here as wall time nothing else explains.
"""

from __future__ import annotations

from kforge_core.evaluation.result import EvalResult, Verdict

# Honest reasons for the timer to report less than back-to-back wall time per call: on a GPU the host's
# launch path, hidden by the timed reps' head start (at most timing.CudaClock.MAX_HEAD_START_MS); L2 hits.
HIDDEN_HOST_MS = {"cuda": 5.0, "cpu": 0.0}  # when the worker reported no launch time (older results)
REJECT = {"cuda": (1.5, 0.05), "cpu": (2.5, 0.3)}  # wall > factor * (reported + launch) + margin: tampered
REJECT_UNDER_LOAD = (10.0, 1.0)  # other load on the CPU stretches the wall blocks too: only a gross gap rejects
UNVERIFIED = (1.5, 0.1)  # wall > factor * reported + margin, and the claimed speedup is not in the wall times
SPEEDUP_GAP = 1.5  # claimed speedup over the independent clock's speedup
UNVERIFIED_FLAG = "speedup unverified"  # the flag's opening words


def per_call_ms(blocks: list[dict]) -> float | None:
    """A side's fastest block, per call: other load only ever slows a block down."""
    per = [b["s"] * 1e3 / b["reps"] for b in blocks or []
           if isinstance(b.get("reps"), int) and b["reps"] > 0 and b.get("s", 0) > 0]
    return min(per) if per else None


def judge(r: EvalResult, blocks: dict, device_type: str) -> EvalResult:
    """The result, rejected or flagged where the parent's clock contradicts its timings."""
    if not r.correct or "candidate" not in r.timings or "eager" not in r.timings:
        return r
    kind = "cuda" if device_type == "cuda" else "cpu"
    wall = {side: per_call_ms(blocks.get(side) or []) for side in ("eager", "candidate")}
    if None in wall.values():
        r.flags.append(f"{UNVERIFIED_FLAG}: the independent clock saw no complete wall block, so the timings "
                       "could not be cross-checked")
        return r
    cand, eager = r.timings["candidate"].median_ms, r.timings["eager"].median_ms
    evidence = (f"by this process's own clock, back-to-back calls took {wall['candidate']:.3f} ms (candidate) and "
                f"{wall['eager']:.3f} ms (eager) each; the worker's timer reported {cand:.3f} ms and {eager:.3f} ms")
    f, m = REJECT_UNDER_LOAD if r.timing_unstable else REJECT[kind]
    # Rejection reads the reps' quartile on the side that favours the candidate: a tampered timer moves every
    # rep, while a burst of other load moves only some of them (a CPU kernel's time is bimodal under load).
    cand_q3, eager_q1 = r.timings["candidate"].q3_ms or cand, r.timings["eager"].q1_ms or eager
    host = r.timings["candidate"].host_ms
    hidden = HIDDEN_HOST_MS[kind] if host is None or kind != "cuda" else host
    # more than any honest reason explains: device time plus launch time (they overlap back to back, so their
    # sum is generous), by the quartile that favours the candidate
    deflated = wall["candidate"] > f * (cand_q3 + hidden) + m
    inflated = eager_q1 > max(f, 3.0) * wall["eager"] + max(m, 0.5)  # timed calls not slower than back-to-back ones
    if deflated or inflated:
        r.verdict = Verdict.REJECTED
        r.messages = [f"timing tampered with: {evidence}", *r.messages]
        return r
    f, m = UNVERIFIED
    claimed, seen = eager / cand if cand > 0 else float("inf"), wall["eager"] / wall["candidate"]
    if (wall["candidate"] > f * cand + m or eager > f * wall["eager"] + m) and claimed > 1 and claimed > SPEEDUP_GAP * seen:
        r.flags.append(f"{UNVERIFIED_FLAG}: {evidence} (speedup {claimed:.2f}x claimed, {seen:.2f}x by that clock); "
                       "the speedup is shown but not counted")
    else:
        r.timing_notes.append(f"independent clock agrees: {evidence}")
    return r
