"""GPU-only adversarial candidates, then a good candidate right after the poisoned CUDA context."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "adversarial"))
from runner import CASES, read_case, run_case  # noqa: E402

from kforge_core.evaluation import EvalSettings, Verdict, evaluate  # noqa: E402
from kforge_core.problems import resolve_problem  # noqa: E402

pytestmark = pytest.mark.gpu
GPU_CASES = [c for c in map(read_case, CASES) if c.backend == "cuda"]


@pytest.mark.parametrize("case", GPU_CASES, ids=lambda c: c.name)
def test_gpu_adversarial_case(case):
    r = run_case(case)
    print(f"\n=== {case.name}: {r.verdict.value}: {r.messages[:1]}")
    assert r.verdict.value in case.expected, (case.name, r.messages)
    if case.message_due(r.verdict.value):
        assert any(case.message in m for m in r.messages), (case.name, r.messages)
    if case.name.startswith("67_") and r.verdict == Verdict.CORRECT:  # work on any stream is in the figure
        assert r.timings["candidate"].median_ms > 0.25 and r.speedup("eager") < 0.5, (r.timings, r.timing_notes)
    if case.name.startswith("39_"):  # the context is poisoned: the next candidate must still be judged fine
        from kforge_core.backends import get_backend

        good = evaluate(resolve_problem("level1/1_ReLU"),
                        get_backend("cuda").example_for("level1/1_ReLU").read_text(), "cuda",
                        EvalSettings(compile_reference=False))
        print(f"=== good candidate after {case.name}: {good.verdict.value}")
        assert good.verdict == Verdict.CORRECT
