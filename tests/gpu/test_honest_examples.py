"""Honest kernels (own equivalents of KernelBench's few-shot examples: add, tiled matmul on the legacy
default stream, a fused GELU, a Triton add, a small CNN with own ReLUs around library convolutions (the MNIST
example's shape), plus the shipped examples) must come back `correct` with no
flag at all: a false alarm on an honest kernel is the second worst bug (issue 18). On the device only."""

import json
import os
from pathlib import Path

import pytest

from kforge_core.backends import get_backend
from kforge_core.evaluation import EvalSettings, Verdict, evaluate
from kforge_core.problems import load_problem_file, resolve_problem
from kforge_core.report import verdict_table

pytestmark = pytest.mark.gpu
HERE = Path(__file__).resolve().parent / "honest"
ADD = load_problem_file(HERE / "add_problem.py")
CASES = [("add_cuda.py", ADD, "cuda"), ("add_triton.py", ADD, "triton"),
         ("tiled_matmul_cuda.py", resolve_problem("level1/4_Square_matrix_multiplication"), "cuda"),
         ("new_gelu_cuda.py", resolve_problem("level1/8_NewGELU"), "cuda"),
         ("small_cnn_relu_cuda.py", load_problem_file(HERE / "small_cnn_problem.py"), "cuda")]
PARTIAL = {"small_cnn_relu_cuda.py"}  # honest partial replacement: library convolutions and GEMMs kept
SHIPPED = [(b, n) for b in ("cuda", "triton") for n in get_backend(b).example_problems()]


def check(tag: str, r) -> None:
    print(f"\n=== {tag}\n{verdict_table(r)}")
    out = os.environ.get("KFORGE_RESULTS_DIR")
    if out:
        with open(Path(out) / "honest_examples.jsonl", "a") as f:
            f.write(json.dumps({"tag": tag, **r.to_dict()}) + "\n")
    assert r.verdict == Verdict.CORRECT, (tag, r.messages)
    assert not r.flags, (tag, r.flags)
    assert r.own_kernel_share is not None, tag
    if tag in PARTIAL:  # most of the time is cuDNN/cuBLAS; its own kernels replaced the ReLUs' share
        assert 0 < r.attribution["replaced_share"] < 0.5 and r.own_kernel_share < 0.5, (tag, r.attribution)
    else:
        assert r.own_kernel_share >= 0.5, (tag, r.own_kernel_share)
    assert r.speedup_counted


@pytest.mark.parametrize("name,problem,backend", CASES, ids=[c[0] for c in CASES])
def test_honest_kernel_is_correct_and_unflagged(name, problem, backend):
    check(name, evaluate(problem, (HERE / name).read_text(), backend, EvalSettings(compile_reference=False)))


@pytest.mark.parametrize("backend,name", SHIPPED, ids=[f"{b}:{n}" for b, n in SHIPPED])
def test_shipped_example_is_correct_and_unflagged(backend, name):
    b = get_backend(backend)
    check(f"{backend}:{name}", evaluate(resolve_problem(name), b.example_for(name).read_text(), b,
                                        EvalSettings(compile_reference=False)))
