"""Triton examples under Triton's CPU interpreter (TRITON_INTERPRET=1): correctness only, marked as such."""

import pytest

from kforge_core.backends import get_backend
from kforge_core.evaluation import EvalSettings, Verdict, evaluate
from kforge_core.problems import resolve_problem

triton = pytest.importorskip("triton", reason="triton is not installed (requirements.txt installs it on Linux x86_64)")
TRITON = get_backend("triton")
pytestmark = pytest.mark.skipif(not TRITON.is_interpreted(), reason="a GPU is present: tests/gpu covers Triton")


@pytest.mark.parametrize("name", TRITON.example_problems())
def test_triton_example_is_correct_under_the_interpreter(name):
    r = evaluate(resolve_problem(name), TRITON.example_for(name).read_text(), TRITON, EvalSettings())
    assert r.verdict == Verdict.CORRECT, r.messages
    assert r.interpreted and r.timings == {} and r.environment["device"] == "cpu"
    assert "interpreted run: correctness only" in __import__("kforge_core.report", fromlist=["x"]).verdict_table(r)


def test_wrong_triton_kernel_is_a_numerical_mismatch():
    src = TRITON.example_for("level1/1_ReLU").read_text().replace("tl.maximum(x, 0.0)", "tl.maximum(x, 0.1)")
    r = evaluate(resolve_problem("level1/1_ReLU"), src, TRITON, EvalSettings())
    assert r.verdict == Verdict.NUMERICAL_MISMATCH


def test_out_of_bounds_triton_access_is_a_runtime_error_or_mismatch():
    # Without the mask the interpreter reads past the end of the buffer: it must not pass as correct.
    src = TRITON.example_for("level1/1_ReLU").read_text().replace("BLOCK = 4096", "BLOCK = 5000")
    src = src.replace("x = tl.load(x_ptr + offs, mask=mask)", "x = tl.load(x_ptr + offs)")
    r = evaluate(resolve_problem("level1/1_ReLU"), src, TRITON, EvalSettings())
    assert r.verdict != Verdict.CORRECT
