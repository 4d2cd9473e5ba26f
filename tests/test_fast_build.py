"""Faster load_inline builds (kforge_core/evaluation/building/fast_build.py): lighter CUDA sources with a fallback,
and a precompiled torch/extension.h that a real C++ build uses."""

import pytest

from kforge_core import ASSETS_DIR
from kforge_core.evaluation import EvalSettings, Verdict, evaluate
from kforge_core.evaluation.building import fast_build as FB
from kforge_core.problems import resolve_problem

KERNEL = """#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void k(float* y) { y[threadIdx.x] = 1.f; }
torch::Tensor f(torch::Tensor x) { auto y = torch::empty_like(x); return y; }
"""


def test_cuda_sources_lose_extension_h_and_keep_their_line_numbers():
    light = FB.lighten_cuda_sources(KERNEL)
    assert light is not None and len(light) == 1
    assert "torch/extension.h>" not in light[0].replace("// torch/extension.h", "")
    assert light[0].count("\n") == KERNEL.count("\n")
    assert light[0].splitlines()[1:] == KERNEL.splitlines()[1:]
    assert FB.lighten_cuda_sources([KERNEL, '#include "torch/extension.h"\nint g;']) is not None


@pytest.mark.parametrize("uses", ["PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {}", "namespace py = pybind11;",
                                  "torch::nn::functional::relu(x);", "torch::NoGradGuard g;",
                                  "torch::autograd::Variable v;", "TORCH_LIBRARY(ns, m) {}"])
def test_sources_that_need_extension_h_are_left_alone(uses):
    assert FB.lighten_cuda_sources(KERNEL + uses) is None


def test_nothing_to_lighten():
    assert FB.lighten_cuda_sources(None) is None
    assert FB.lighten_cuda_sources("#include <torch/types.h>\n__global__ void k() {}") is None


class FakeLoadInline:
    """Stands in for torch's load_inline to check which sources the wrapper builds, in which order."""

    def __init__(self, fail_light_with: str | None):
        self.fail_light_with, self.calls = fail_light_with, []

    def __call__(self, name, cpp_sources, cuda_sources=None, **kwargs):
        self.calls.append(cuda_sources)
        light = cuda_sources and "KForge fast build" in "".join(cuda_sources)
        if light and self.fail_light_with:
            raise RuntimeError(f"Error building extension '{name}': cuda.cu(4): error: {self.fail_light_with}")
        return "module"


def test_light_build_is_used_when_it_compiles():
    fake, notes = FakeLoadInline(None), []
    assert FB.FastLoadInline(fake, None, notes)("m", "", KERNEL) == "module"
    assert len(fake.calls) == 1 and "KForge fast build" in fake.calls[0][0]
    assert notes == ["CUDA sources built with torch/types.h in place of torch/extension.h"]


def test_missing_declaration_rebuilds_the_source_as_written():
    fake, notes = FakeLoadInline('namespace "torch" has no member "fft"'), []
    assert FB.FastLoadInline(fake, None, notes)("m", "", KERNEL) == "module"
    assert len(fake.calls) == 2 and fake.calls[1] == KERNEL
    assert notes == ["CUDA sources needed torch/extension.h after all: rebuilt as written"]


def test_the_candidates_own_compile_error_is_not_built_twice():
    fake = FakeLoadInline('a value of type "int *" cannot be used to initialize an entity of type "float *"')
    with pytest.raises(RuntimeError, match="cannot be used to initialize"):
        FB.FastLoadInline(fake, None, [])("m", "", KERNEL)
    assert len(fake.calls) == 1


def test_positional_arguments_pass_through_untouched():
    # load_inline(name, cpp_sources, cuda_sources, functions, ...) written positionally is built as written
    calls = []
    FB.FastLoadInline(lambda *a, **k: calls.append(a), None, [])("m", "", KERNEL, ["f"])
    assert calls == [("m", "", KERNEL, ["f"])]


def test_main_cpp_flags_are_torchs_own():
    pytest.importorskip("torch.utils.cpp_extension")
    flags = FB.main_cpp_flags("x", ["-O3", "-fopenmp"], [], with_cuda=False)
    assert flags is not None, "torch's ninja writer changed: the precompiled header is silently off"
    assert "-DTORCH_API_INCLUDE_EXTENSION_H" in flags and "-O3" in flags and "-fopenmp" in flags
    assert not any(f.startswith("-DTORCH_EXTENSION_NAME") for f in flags)


def test_a_real_cpu_build_uses_the_precompiled_header(tmp_path, monkeypatch):
    """First build compiles the PCH beside itself; a new source with the same flags then uses it (that gcc
    really reads it, rather than ignoring it, is test_gcc_reads_the_pch)."""
    monkeypatch.setenv("KFORGE_PCH_DIR", str(tmp_path / "pch"))
    problem = resolve_problem("level1/1_ReLU")
    src = (ASSETS_DIR / "examples/cpu/level1/1_ReLU.py").read_text()
    s = EvalSettings(cache_dir=str(tmp_path / "cache"), compile_reference=False, min_timing_s=0.01, max_reps=5,
                     split_build=False)  # the load_inline path (the split build has no header to precompile)
    first = evaluate(problem, src, "cpu", s)
    assert first.verdict == Verdict.CORRECT, first.messages
    assert first.build_notes == []
    gch = list((tmp_path / "pch").glob("*/kforge_torch_extension.h.gch"))
    assert len(gch) == 1 and gch[0].stat().st_size > 50 << 20

    second = evaluate(problem, src + "\n# another source\n", "cpu", s)
    assert second.verdict == Verdict.CORRECT, second.messages
    assert second.build_notes == ["main.cpp used the precompiled torch/extension.h"]
    assert second.detail_seconds.get("waiting_for_precompiled_header", 0) < 1

    monkeypatch.setenv("KFORGE_FAST_BUILD", "0")
    plain = evaluate(problem, src + "\n# built as torch builds it\n", "cpu", s)
    assert plain.verdict == Verdict.CORRECT and plain.build_notes == []


def test_gcc_reads_the_pch(tmp_path):
    """gcc's include trace (-H) marks a used precompiled header with '!': proof the .gch is not ignored."""
    import subprocess

    from torch.utils.cpp_extension import get_cxx_compiler

    cxx = get_cxx_compiler()
    flags = FB.main_cpp_flags("x", ["-O1"], [], with_cuda=False)
    header, ready = FB.pch_header(tmp_path, cxx, flags)
    assert not ready
    job = FB.start_pch_build(header, cxx, flags)
    assert job is not None and FB.start_pch_build(header, cxx, flags) is None  # one builder at a time
    assert job.wait(timeout=600) == 0
    assert FB.pch_header(tmp_path, cxx, flags)[1]
    main = tmp_path / "main.cpp"
    main.write_text("#include <torch/extension.h>\nint f() { return 1; }\n")
    p = subprocess.run([cxx, *flags, "-DTORCH_EXTENSION_NAME=other", "-include", str(header), "-H",
                        "-Winvalid-pch", "-c", str(main), "-o", str(tmp_path / "main.o")],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert f"! {header}.gch" in p.stderr
