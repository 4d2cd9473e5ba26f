"""On an NVIDIA GPU (the device machine): CUDA and Triton examples, wrong and crashing CUDA kernels.

Every result is appended as JSON to $KFORGE_RESULTS_DIR/gpu_backends.jsonl when that is set, so the
run's figures are kept under bench/results/.
"""

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from candidates.cuda_test_kernels import cuda_candidate
from kforge_core.backends import get_backend
from kforge_core.evaluation import EvalSettings, Verdict, evaluate
from kforge_core.problems import resolve_problem
from kforge_core.report import verdict_table

pytestmark = pytest.mark.gpu
TIMED = EvalSettings(compile_reference=True)


def record(tag: str, r):
    out = os.environ.get("KFORGE_RESULTS_DIR")
    print(f"\n=== {tag}\n{verdict_table(r)}")
    if out:
        with open(Path(out) / "gpu_backends.jsonl", "a") as f:
            f.write(json.dumps({"tag": tag, **r.to_dict()}) + "\n")


def _evaluate_examples(backend_name: str):
    b = get_backend(backend_name)
    names = b.example_problems()
    # Build (and check) all examples concurrently to warm the build cache, then time them one at a time.
    with ThreadPoolExecutor(len(names)) as pool:
        warm = list(pool.map(lambda n: evaluate(resolve_problem(n), b.example_for(n).read_text(), b,
                                                EvalSettings(timing=False)), names))
    for n, r in zip(names, warm):
        record(f"{backend_name}:{n} (cold cache, {len(names)} builds at once, no timing: {r.duration_s:.1f} s)", r)
        assert r.verdict == Verdict.CORRECT, (n, r.messages, r.build_log)
    results = {}
    for n in names:
        t0 = time.monotonic()
        r = evaluate(resolve_problem(n), b.example_for(n).read_text(), b, TIMED)
        record(f"{backend_name}:{n} (warm cache, {time.monotonic() - t0:.1f} s)", r)
        results[n] = r
    return results


@pytest.mark.parametrize("backend", ["cuda", "triton"])
def test_examples_correct_with_speedups(backend):
    results = _evaluate_examples(backend)
    assert len(results) >= 5
    for n, r in results.items():
        assert r.verdict == Verdict.CORRECT, (n, r.messages)
        assert not r.interpreted and r.speedup("eager") is not None and r.speedup("eager") > 0
        assert r.environment["gpu"] and r.environment["capability"]


def test_wrong_cuda_kernel_is_a_numerical_mismatch():
    r = evaluate(resolve_problem("level1/1_ReLU"), cuda_candidate("return ext.relu_off_by_a_bit(x)"), "cuda",
                 EvalSettings(timing=False))
    record("cuda: wrong kernel", r)
    assert r.verdict == Verdict.NUMERICAL_MISMATCH


def test_illegal_memory_access_then_next_evaluation_still_works():
    relu = resolve_problem("level1/1_ReLU")
    bad = evaluate(relu, cuda_candidate("return ext.illegal_access(x)"), "cuda", EvalSettings(timing=False))
    record("cuda: illegal memory access", bad)
    assert bad.verdict == Verdict.RUNTIME_ERROR
    assert "illegal memory access" in bad.messages[0] or "CUDA error" in bad.messages[0] or "SIG" in bad.messages[0]
    good = evaluate(relu, cuda_candidate("return ext.relu_ok(x)"), "cuda", EvalSettings(compile_reference=False))
    record("cuda: good kernel right after the poisoned context", good)
    assert good.verdict == Verdict.CORRECT


def test_cuda_compile_error_has_candidate_line():
    src = cuda_candidate("return ext.relu_ok(x)").replace("if (i < n) y[i] = fmaxf", "if (i < n) y[i] = not_a_fn")
    r = evaluate(resolve_problem("level1/1_ReLU"), src, "cuda", EvalSettings(timing=False))
    record("cuda: compile error", r)
    assert r.verdict == Verdict.COMPILE_ERROR
    line = next(i for i, l in enumerate(src.splitlines(), 1) if "not_a_fn" in l)
    assert r.messages[0].startswith(f"candidate.py:{line} ("), r.messages[0]


def test_inputs_are_made_on_the_gpu_unless_the_problem_needs_the_host():
    """get_inputs() runs with the GPU as default device (seconds saved on KernelBench's large inputs); a
    problem that draws from a CPU generator gets host inputs, said in the timing notes, and the same verdict."""
    from kforge_core.problems import problem_from_source

    b = get_backend("cuda")
    base = resolve_problem("level1/1_ReLU")
    src = b.example_for("level1/1_ReLU").read_text()
    settings = EvalSettings(compile_reference=False)
    on_gpu = evaluate(base, src, b, settings)
    record("inputs made on the GPU", on_gpu)
    assert on_gpu.correct and not any("inputs made on the host" in n for n in on_gpu.timing_notes)
    host_source = base.source.replace("return [torch.randn(batch_size, dim)]",
                                      "return [torch.randn(batch_size, dim, generator=torch.Generator())]")
    assert host_source != base.source
    on_host = evaluate(problem_from_source(host_source, "relu_host_generator"), src, b, settings)
    record("inputs made on the host (CPU generator)", on_host)
    assert on_host.correct, on_host.messages
    assert any("inputs made on the host" in n for n in on_host.timing_notes), on_host.timing_notes
