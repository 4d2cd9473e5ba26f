"""The evaluator on the CPU backend with real compiled C++ candidates in real child processes."""

import time
from pathlib import Path

import pytest

from candidates.cpu_test_kernels import candidate
from kforge_core import ASSETS_DIR
from kforge_core.evaluation import EvalSettings, Verdict, evaluate
from kforge_core.problems import resolve_problem

RELU = resolve_problem("level1/1_ReLU")
FAST = dict(compile_reference=False, min_timing_s=0.05, min_reps=5, max_reps=30)


def run(body: str, **overrides):
    return evaluate(RELU, candidate(body), "cpu", EvalSettings(**{**FAST, **overrides}))


def test_shipped_example_is_correct_with_speedups_vs_eager_and_compile():
    src = (ASSETS_DIR / "examples/cpu/level1/1_ReLU.py").read_text()
    r = evaluate(RELU, src, "cpu", EvalSettings(min_timing_s=0.1, max_reps=50))
    assert r.verdict == Verdict.CORRECT, r.messages
    assert len(r.trials) == 3 and len({t.seed for t in r.trials}) == 3
    assert all(t.passed and t.max_abs_err == 0.0 for t in r.trials)
    assert set(r.timings) == {"candidate", "eager", "compiled"}, r.timing_errors
    assert r.speedup("eager") > 0 and r.speedup("compiled") > 0
    lo, hi = r.speedup_range("eager")
    assert lo <= r.speedup("eager") <= hi
    assert r.environment["torch"] and r.environment["device"] == "cpu"
    d = r.to_dict()
    assert d["verdict"] == "correct" and d["speedup_vs_eager"] == pytest.approx(r.speedup("eager"))


def test_correct_test_kernel():
    r = run("return ext.relu_ok(x)")
    assert r.verdict == Verdict.CORRECT, r.messages
    assert r.timings["candidate"].median_ms > 0 and r.speedup("eager") is not None


def test_wrong_numerics_reports_worst_element():
    r = run("return ext.relu_off_by_a_bit(x)", timing=False)
    assert r.verdict == Verdict.NUMERICAL_MISMATCH
    assert len(r.trials) == 3 and not any(t.passed for t in r.trials)
    assert all(t.max_abs_err == pytest.approx(0.01, rel=1e-3) for t in r.trials)
    assert 0.4 < r.trials[0].mismatch_fraction < 0.6  # about half the inputs are positive
    assert "expected" in r.trials[0].worst and "outside the allowance (float64 reference" in r.messages[0]
    assert r.trials[0].error_model["model"] == "float64 reference"


def test_wrong_shape():
    r = run("return ext.relu_drops_last_row(x)")
    assert r.verdict == Verdict.SHAPE_MISMATCH
    assert "expected shape (64, 16384), got (63, 16384)" in r.messages[0]


def test_wrong_dtype_is_a_structural_mismatch():
    r = run("return ext.relu_ok(x).double()")
    assert r.verdict == Verdict.SHAPE_MISMATCH and "dtype" in r.messages[0]


def test_segfault_is_a_runtime_error_and_parent_survives():
    r = run("return ext.segfault(x)")
    assert r.verdict == Verdict.RUNTIME_ERROR
    assert "SIGSEGV" in r.messages[0] and "correctness" in r.messages[0]
    assert run("return ext.relu_ok(x)").verdict == Verdict.CORRECT  # the next evaluation still works


def test_abort_and_os_exit():
    r = run("return ext.abort_now(x)")
    assert r.verdict == Verdict.RUNTIME_ERROR and "SIGABRT" in r.messages[0]
    r = run("os._exit(7)", strictness="off")  # strict rules would reject os._exit before it runs
    assert r.verdict == Verdict.RUNTIME_ERROR and "exited with code 7" in r.messages[0]


def test_hanging_kernel_times_out_within_limit():
    limit = 4.0
    t0 = time.monotonic()
    r = run("return ext.spin_forever(x)", run_timeout_s=limit)
    assert r.verdict == Verdict.TIMEOUT and "during correctness" in r.messages[0]
    run_phase = r.duration_s - (r.stage_seconds.get("build", 0) if r.stage_seconds else 0)
    assert time.monotonic() - t0 < 120  # build is a cache hit by now; whole call bounded
    # the run deadline starts when correctness starts; the kill lands within a few seconds of it
    assert r.duration_s < limit + 60 and "4 s limit" in r.messages[0]
    assert run_phase >= limit


def test_memory_bomb_in_cpp_and_in_torch():
    r = run("return ext.allocate_100gb(x)", memory_limit_mb=2048)
    assert r.verdict == Verdict.RUNTIME_ERROR
    assert "MemoryError" in r.messages[0] or "bad_alloc" in r.messages[0] or "memory" in r.messages[0].lower()
    r = run("return torch.ones(25_000_000_000, dtype=torch.float32)[: x.numel()].view_as(x)", memory_limit_mb=2048)
    assert r.verdict == Verdict.RUNTIME_ERROR and "allocat" in r.messages[0].lower()


COMPILE_ERROR_CANDIDATE = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""
#include <torch/extension.h>
torch::Tensor relu_broken(torch::Tensor x) {
    auto y = torch::empty_like(x);
    float* out = y.data_ptr<float>();
    undeclared_helper(out, x.numel());
    return y;
}
"""

ext = load_inline(name="kforge_test_compile_error", cpp_sources=CPP, functions=["relu_broken"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_broken(x)
'''


def test_compile_error_names_the_candidate_line():
    r = evaluate(RELU, COMPILE_ERROR_CANDIDATE, "cpu", EvalSettings(**FAST))
    assert r.verdict == Verdict.COMPILE_ERROR
    line = COMPILE_ERROR_CANDIDATE.splitlines().index("    undeclared_helper(out, x.numel());") + 1
    assert r.messages[0].startswith(f"candidate.py:{line} (main.cpp:"), r.messages[0]
    assert "undeclared_helper" in r.messages[0] and "error" in r.build_log


def test_static_verdicts_need_no_process():
    assert evaluate(RELU, "", "cpu").verdict == Verdict.GENERATION_FAILURE
    r = evaluate(RELU, "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x)\n", "cpu")
    assert r.verdict == Verdict.COMPILE_ERROR and r.messages[0].startswith("candidate.py:3")
    r = evaluate(RELU, "import torch\nclass Model2(torch.nn.Module):\n    pass\n", "cpu")
    assert r.verdict == Verdict.STATIC_REJECTED and "ModelNew" in r.messages[0]
    r = evaluate(RELU, "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                       "        return torch.relu(x)\n", "cpu")
    assert r.verdict == Verdict.STATIC_REJECTED and "custom kernel" in r.messages[0]
    assert evaluate(RELU, "\x00\x01binary", "cpu").verdict == Verdict.STATIC_REJECTED


def test_python_exception_names_candidate_line():
    r = run("raise ValueError('kernel launch config invalid')")
    assert r.verdict == Verdict.RUNTIME_ERROR
    assert "ValueError: kernel launch config invalid (candidate.py:" in r.messages[0]


def test_shipped_cpu_examples_all_pass():
    from kforge_core.backends import get_backend

    cpu = get_backend("cpu")
    names = cpu.example_problems()
    assert len(names) >= 3
    for name in names:
        r = evaluate(resolve_problem(name), cpu.example_for(name).read_text(), cpu,
                     EvalSettings(**{**FAST, "timing": False}))
        assert r.verdict == Verdict.CORRECT, (name, r.messages)


def test_implausible_speedup_is_flagged_for_review_not_rejected():
    r = run("return ext.relu_ok(x)", suspicious_speedup=1e-6)  # any speedup is "implausible" at this threshold
    assert r.verdict == Verdict.CORRECT
    assert any("review threshold" in f for f in r.flags)
    from kforge_core.report import verdict_table

    assert "FLAGGED FOR REVIEW" in verdict_table(r)


INIT_BUILD = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
torch::Tensor relu(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* a = xc.data_ptr<float>(); float* b = y.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) b[i] = a[i] > 0.f ? a[i] : 0.f;
    %s
    return y;
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # built where the model is made, as about half of real LLM sources do (verbose=True, as many write)
        self.ext = load_inline(name="kforge_init_build_%s", cpp_sources=SRC, functions=["relu"], verbose=True,
                               extra_cflags=["-O2", ""], extra_ldflags=[""])

    def forward(self, x):
        return self.ext.relu(x)
'''


def test_a_build_in_model_init_is_a_build_and_its_compile_error_names_the_compiler_error():
    r = evaluate(RELU, INIT_BUILD % ("", "ok"), "cpu", EvalSettings(**FAST))
    assert r.verdict == Verdict.CORRECT, r.messages
    # the build ran in the build stage (under the build limit), not in correctness
    assert "build_in_model_init" in r.detail_seconds, r.detail_seconds
    assert r.detail_seconds["build_in_model_init"] <= r.stage_seconds["build"]
    assert any(n.startswith("split build:") for n in r.build_notes), r.build_notes  # [''] flags taken too
    bad = evaluate(RELU, INIT_BUILD % ("undeclared_helper(b);", "bad"), "cpu", EvalSettings(**FAST))
    assert bad.verdict == Verdict.COMPILE_ERROR, bad.messages
    assert "undeclared_helper" in bad.messages[0] and "error" in bad.messages[0], bad.messages[0]
