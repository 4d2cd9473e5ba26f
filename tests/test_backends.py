"""Backends: availability with reasons, shipped examples, static checks, Metal source assembly (no Mac)."""

import re

import pytest

from kforge_core.backends import all_backends, get_backend
from kforge_core.backends.metal import metal_availability
from kforge_core.evaluation.judging.static_checks import check_source
from kforge_core.problems import builtin_problems


def test_registry_has_every_target():
    assert [b.name for b in all_backends()] == ["cpu", "cuda", "triton", "metal"]
    for b in all_backends():
        a = b.available()
        assert a.ok or a.reason, b.name  # unavailable always says why


def test_metal_is_unavailable_on_linux_with_a_reason():
    a = metal_availability("Linux")
    assert not a.ok and "macOS" in a.reason and "Linux" in a.reason
    a = metal_availability("Darwin")  # on a non-Mac torch build MPS is missing: still a clear reason
    assert a.ok or "MPS" in a.reason or "compile_shader" in a.reason


def test_cuda_reason_without_gpu():
    import torch

    a = get_backend("cuda").available()
    if not torch.cuda.is_available():
        assert not a.ok and ("CPU-only" in a.reason or "no CUDA GPU" in a.reason or "nvcc" in a.reason)


@pytest.mark.parametrize("name,minimum", [("cpu", 3), ("cuda", 5), ("triton", 5), ("metal", 1)])
def test_each_backend_ships_examples_for_builtin_problems(name, minimum):
    b = get_backend(name)
    names = b.example_problems()
    assert len(names) >= minimum
    builtin = {p.name for p in builtin_problems()}
    assert set(names) <= builtin
    for n in names:
        src = b.example_for(n).read_text()
        assert check_source(src, b) is None, (name, n)  # passes its own backend's static checks


def test_static_check_requires_the_backends_own_kernels():
    cuda_src = get_backend("cuda").example_for("level1/1_ReLU").read_text()
    triton_src = get_backend("triton").example_for("level1/1_ReLU").read_text()
    assert check_source(cuda_src, get_backend("triton")) is not None
    assert check_source(triton_src, get_backend("cuda")) is not None
    assert check_source(triton_src, get_backend("metal")) is not None


@pytest.mark.parametrize("problem", get_backend("metal").example_problems())
def test_metal_examples_call_only_kernels_their_shader_defines(problem):
    src = get_backend("metal").example_for(problem).read_text()
    defined = set(re.findall(r"kernel\s+void\s+(\w+)\s*\(", src))
    libs = set(re.findall(r"(\w+)\s*=\s*torch\.mps\.compile_shader\(", src))
    called = set(re.findall(r"\b(\w+)\.(\w+)\(", src))
    calls = {k for lib, k in called if lib in libs}
    assert defined and libs and calls and calls <= defined
    assert "#include <metal_stdlib>" in src and "[[thread_position_in_grid]]" in src


def test_metal_evaluation_on_linux_is_a_clear_verdict_not_a_crash():
    from kforge_core.evaluation import evaluate
    from kforge_core.problems import resolve_problem

    metal = get_backend("metal")
    r = evaluate(resolve_problem("level1/1_ReLU"), metal.example_for("level1/1_ReLU").read_text(), metal)
    if not metal.available().ok:
        assert r.verdict.value == "runtime_error" and "not available here" in r.messages[0]
