"""The parent's clock against the worker's timings (kforge_core/evaluation/judging/parent_clock.py): what it rejects,
what it only flags, and the honest disagreements it must let pass."""

from kforge_core.evaluation.judging.parent_clock import UNVERIFIED_FLAG, judge
from kforge_core.evaluation.result import EvalResult, TimingStats, Verdict


def result(cand_ms: float, eager_ms: float) -> EvalResult:
    t = lambda ms: TimingStats(ms, ms, ms, ms, ms, ms, 0.0, 20)  # noqa: E731
    return EvalResult(Verdict.CORRECT, ["ok"], timings={"candidate": t(cand_ms), "eager": t(eager_ms)})


def blocks(cand_ms: float, eager_ms: float, reps: int = 100) -> dict:
    """Four blocks per side, one of them slowed 3x by a burst of other load: the fastest is what counts."""
    def side(ms):
        return [{"s": ms * reps / 1e3 * (3 if i == 1 else 1), "reps": reps} for i in range(4)]
    return {"candidate": side(cand_ms), "eager": side(eager_ms)}


def test_agreeing_clocks_leave_the_result_alone():
    r = judge(result(1.0, 2.0), blocks(1.05, 2.1), "cuda")
    assert r.verdict == Verdict.CORRECT and not r.flags and "independent clock agrees" in r.timing_notes[0]


def test_a_candidate_reporting_a_tenth_of_its_time_is_rejected():
    r = judge(result(1.0, 2.0), blocks(10.0, 2.0), "cuda")  # 10 ms per call by the parent's clock
    assert r.verdict == Verdict.REJECTED and r.messages[0].startswith("timing tampered with")
    r = judge(result(0.1, 0.5), blocks(1.0, 0.5), "cpu")  # on the CPU no head start hides anything
    assert r.verdict == Verdict.REJECTED


def test_an_inflated_baseline_is_rejected():
    r = judge(result(1.0, 9.0), blocks(1.0, 2.0), "cuda")
    assert r.verdict == Verdict.REJECTED


def test_a_host_bound_model_is_not_blamed():
    # KernelBench L3/9 ResNet18 on an H100 (bench/results/2026-11-26_h100x4_honesty): many small kernels, so
    # back-to-back calls are host-bound and slower than the GPU time the head-started reps measure
    r = judge(result(1.2, 1.15), blocks(2.157, 2.210), "cuda")
    assert r.verdict == Verdict.CORRECT and not r.flags


def test_a_claimed_speedup_the_independent_clock_does_not_see_is_unverified():
    r = judge(result(0.2, 1.0), blocks(1.0, 1.0), "cuda")  # 5x claimed, 1x by the parent's clock
    assert r.verdict == Verdict.CORRECT and r.flags[0].startswith(UNVERIFIED_FLAG)
    assert not r.speedup_counted


def test_under_other_load_only_a_gross_gap_rejects():
    def loaded(cand_ms, eager_ms):
        r = result(cand_ms, eager_ms)
        r.flags.append("unstable timing (other load on the CPU)")
        return r

    r = judge(loaded(0.1, 0.5), blocks(1.0, 0.5), "cpu")  # 10x: load could do that
    assert r.verdict == Verdict.CORRECT and any(f.startswith(UNVERIFIED_FLAG) for f in r.flags)
    r = judge(loaded(0.02, 0.5), blocks(2.0, 0.5), "cpu")  # 100x: it could not
    assert r.verdict == Verdict.REJECTED


def test_no_wall_block_means_unverified():
    r = judge(result(1.0, 2.0), {}, "cuda")
    assert r.verdict == Verdict.CORRECT and r.flags[0].startswith(UNVERIFIED_FLAG)


def test_below_5_ms_a_side_stream_figure_is_rejected_once_the_launch_time_is_known():
    """Issue 26: a side stream's 0.33 ms that the timed stream's events saw as 1.3 us (RL-system kernels);
    with the worker's measured launch time the allowance is device time + launch time, at every size."""
    r = result(0.0013, 0.05)
    r.timings["candidate"].host_ms = 0.02
    r = judge(r, blocks(0.33, 0.05), "cuda")
    assert r.verdict == Verdict.REJECTED and r.messages[0].startswith("timing tampered with")
    # an honest launch-bound call (its wall time is its launch time) passes
    honest = result(0.004, 0.006)
    honest.timings["candidate"].host_ms = 0.03
    assert judge(honest, blocks(0.034, 0.012), "cuda").verdict == Verdict.CORRECT
