"""The split build (issue 15): the source split, the thin binding, real CPU builds through torch-lite (and their
fallback), and CUDA sources compiled through the split path wherever a CUDA build of torch is at hand."""

import ast
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from kforge_core import ASSETS_DIR, REPO_ROOT
from kforge_core.evaluation import EvalSettings, Verdict, evaluate
from kforge_core.evaluation.building import cuda_split as CS
from kforge_core.evaluation.building import lite_binding as LB
from kforge_core.evaluation.building import split_build as SB
from kforge_core.problems import resolve_problem

CUDA_SOURCES = sorted((ASSETS_DIR / "examples" / "cuda").glob("*/*.py")) + \
    sorted((REPO_ROOT / "tests" / "gpu" / "honest").glob("*_cuda.py")) + \
    sorted((REPO_ROOT / "bench" / "cuda_candidates").glob("kb_*.py"))


def cuda_strings(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and "__global__" in n.value]


@pytest.mark.parametrize("path", CUDA_SOURCES, ids=lambda p: p.name)
def test_every_shipped_cuda_source_splits_and_keeps_its_lines(path):
    (src,) = cuda_strings(path)
    parts = CS.split(SB.without_torch_includes(src))
    n = src.count("\n")
    assert parts.device.count("\n") == n and parts.host.count("\n") == n  # compiler messages point at the author's lines
    assert parts.kernels
    for k in parts.kernels:
        line = next(i for i, l in enumerate(src.splitlines()) if "__global__" in l and f" {k}(" in l)
        assert f"{k}(" in parts.device.splitlines()[line]  # the kernel stays on its line in the device part
        assert "__global__" not in parts.host and f"{CS.PREFIX}{k}(" in parts.host
        assert "<<<" not in CS._code(parts.host)  # every launch became a launcher call
    assert "torch::" not in CS._code(parts.device)


def test_a_launch_becomes_a_call_with_the_same_arguments():
    src = textwrap.dedent("""
        __global__ void k(const float* x, float* y, int n) { int i = threadIdx.x; if (i < n) y[i] = x[i]; }
        void run(const float* x, float* y, int64_t n, cudaStream_t s) {
            k<<<(n + 255) / 256, 256, 0, s>>>(x,
                                             y, n);
            k<<<1, 32>>>(x, y, n);
        }
    """)
    p = CS.split(src)
    assert "kforge_launch_k(dim3((n + 255) / 256), dim3(256), static_cast<size_t>(0), static_cast<cudaStream_t>(s), x," in p.host
    assert "kforge_launch_k(dim3(1), dim3(32), static_cast<size_t>(0), static_cast<cudaStream_t>(0), x, y, n)" in p.host
    assert "void kforge_launch_k(dim3 kforge_grid, dim3 kforge_block, size_t kforge_shmem, cudaStream_t kforge_stream, const float* x, float* y, int n)" in p.device
    assert p.host.count("\n") == src.count("\n")


MUST_FALL_BACK = {
    "templated": ("template <typename T> __global__ void k(T* x) {}\nvoid f(float* x) { k<float><<<1, 1>>>(x); }",
                  "templated"),
    "cutlass": ("#include <cutlass/gemm/device/gemm.h>\n__global__ void k() {}", "CUTLASS"),
    "constant memory from host": ("__constant__ float w[4];\n__global__ void k(float* x) { x[0] = w[0]; }\n"
                                  "void f(float* h) { cudaMemcpyToSymbol(w, h, 16); }", "device symbol w"),
    "kernel as a value": ("__global__ void k(float* x) {}\nvoid f() { cudaFuncSetAttribute(k, "
                          "cudaFuncAttributeMaxDynamicSharedMemorySize, 1 << 16); }", "other than by launching"),
    "device code on torch": ("__global__ void k(c10::Half* x) {}", "torch/ATen/c10"),
    "unnamed parameter": ("__global__ void k(float*, int n) {}", "without a name"),
}


@pytest.mark.parametrize("case", MUST_FALL_BACK, ids=list(MUST_FALL_BACK))
def test_what_the_split_cannot_take_says_why(case):
    src, reason = MUST_FALL_BACK[case]
    with pytest.raises(CS.Unsplittable, match=reason):
        CS.split(src)


def test_torch_includes_outside_torch_lite_fall_back():
    assert SB.without_torch_includes("#include <torch/extension.h>\nint x;").startswith("\nint x;")
    with pytest.raises(CS.Unsplittable, match="ATen/native"):
        SB.without_torch_includes("#include <ATen/native/Resize.h>\n")


def test_the_binding_reads_the_declared_types():
    cpp = "torch::Tensor f(torch::Tensor x, int64_t k, double eps, bool flag);\nvoid g(const at::Tensor& y);"
    assert LB.signatures(cpp, {"f": "f", "g": "g"}) == {"f": ("tensor", ["tensor", "int", "float", "bool"]),
                                                        "g": ("void", ["tensor"])}
    # a vector of tensors is a result the binding returns as a list; as a parameter (or a tuple) it is not known
    assert LB.signatures("std::vector<torch::Tensor> h(torch::Tensor x);", {"h": "h"}) == {"h": ("tensors", ["tensor"])}
    with pytest.raises(CS.Unsplittable, match="std::vector"):
        LB.signatures("torch::Tensor h(std::vector<torch::Tensor> xs);", {"h": "h"})
    with pytest.raises(CS.Unsplittable, match="std::tuple"):
        LB.signatures("std::tuple<torch::Tensor, torch::Tensor> h(torch::Tensor x);", {"h": "h"})
    with pytest.raises(CS.Unsplittable, match="no declaration"):
        LB.signatures("int other();", {"h": "h"})


# -- real builds on the CPU: g++ against torch-lite, ctypes binding ------------------------------------------

LITE_CPP = r"""
#include <torch/extension.h>
torch::Tensor scale(torch::Tensor x, double s) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "scale expects float32, got ", x.scalar_type());
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* a = xc.data_ptr<float>();
    float* b = y.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) b[i] = a[i] * (float)s;
    return y;
}
int64_t rows(torch::Tensor x) { return x.size(0); }
std::vector<torch::Tensor> halves(torch::Tensor x) {  // a vector result, as LLM wrappers return several outputs
    return {scale(x, 0.5).clone(), torch::zeros(x.size(0), x.options())};
}
"""


@pytest.fixture(scope="module")
def lite_module(tmp_path_factory):
    torch = pytest.importorskip("torch")
    notes = []
    # cpp_sources carry the definitions here (a CPU extension): the binding reads their declarations
    m = SB.SplitBuilder(tmp_path_factory.mktemp("split"), notes).build(
        "kforge_lite_test", LITE_CPP, None, functions=["scale", "rows", "halves"], extra_cflags=["-O2", ""],
        extra_ldflags=[""])  # empty flags, as many models write
    assert any(n.startswith("split build:") for n in notes), notes
    return torch, m


def test_a_lite_build_computes_what_it_says(lite_module):
    torch, m = lite_module
    x = torch.randn(64, 33)
    assert torch.equal(m.scale(x, 2.0), x * 2.0)
    assert torch.equal(m.scale(x.t(), 0.5), x.t().contiguous() * 0.5)  # contiguous() of a transposed view
    assert m.rows(x) == 64
    half, zeros = m.halves(x)
    assert torch.equal(half, x * 0.5) and torch.equal(zeros, torch.zeros(64))  # a list, as pybind11 gives
    with pytest.raises(RuntimeError, match="scale expects float32, got Double"):
        m.scale(x.double(), 2.0)  # TORCH_CHECK's message, as a RuntimeError (as through pybind11)
    with pytest.raises(TypeError):
        m.scale(3, 2.0)


def test_results_are_freed(lite_module):
    """Every result's handle goes back to torch: no memory kept per call (one form of torch's handle API
    copies and leaks; 50 calls of 40 MB results would keep 2 GB)."""
    torch, m = lite_module
    x = torch.ones(10_000_000)

    def rss_mb():
        return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") >> 20

    m.scale(x, 1.0)
    before = rss_mb()
    for _ in range(50):
        y = m.scale(x, 1.0)
    del y
    assert rss_mb() - before < 300


def test_cpu_candidate_takes_the_split_path_and_the_same_verdict():
    src = (ASSETS_DIR / "examples" / "cpu" / "level1" / "8_NewGELU.py").read_text()
    problem = resolve_problem("level1/8_NewGELU")
    fast = dict(compile_reference=False, min_timing_s=0.02, max_reps=10, strictness="off")
    split = evaluate(problem, src, "cpu", EvalSettings(**fast))
    assert split.verdict == Verdict.CORRECT, split.messages
    assert any(n.startswith("split build:") for n in split.build_notes), split.build_notes
    full = evaluate(problem, src + "\n# built as written\n", "cpu", EvalSettings(**fast, split_build=False))
    assert full.verdict == split.verdict
    assert not any("split build" in n for n in full.build_notes)


def test_an_api_torch_lite_lacks_falls_back_to_the_full_build():
    src = (ASSETS_DIR / "examples" / "cpu" / "level1" / "8_NewGELU.py").read_text()
    assert "torch::empty_like(xc)" in src
    src = src.replace("torch::empty_like(xc)", "torch::empty_like(xc).view({-1}).view(xc.sizes())")
    r = evaluate(resolve_problem("level1/8_NewGELU"), src, "cpu",
                 EvalSettings(compile_reference=False, timing=False, strictness="off"))
    assert r.verdict == Verdict.CORRECT, r.messages
    assert any(n.startswith("split build not used") and "view" in n for n in r.build_notes), r.build_notes


# -- CUDA sources through the split path, with a CUDA build of torch (no GPU needed) -------------------------

CUDA_PYTHON = os.environ.get("KFORGE_CUDA_PYTHON")


@pytest.mark.skipif(not CUDA_PYTHON, reason="KFORGE_CUDA_PYTHON (a python with the CUDA build of torch) is not "
                                             "set; CI sets it (.ci/run)")
def test_cuda_sources_build_through_the_split_path(tmp_path):
    script = textwrap.dedent(r"""
        import ast, json, sys
        from pathlib import Path
        from kforge_core.evaluation.building import split_build as SB
        import torch.utils.cpp_extension as ce
        out = {}
        for path in sys.argv[2:]:
            calls = []
            ce.load_inline = lambda *a, **k: calls.append(k) or None
            try:
                exec(compile(Path(path).read_text(), path, "exec"), {"__name__": "candidate"})
            except Exception:
                pass  # the model class needs the module; only the load_inline call matters here
            k = calls[0]
            notes = []
            try:
                SB.SplitBuilder(Path(sys.argv[1]), notes).build(**{x: k.get(x) for x in (
                    "name", "cpp_sources", "cuda_sources", "functions", "extra_cflags", "extra_cuda_cflags",
                    "extra_ldflags", "extra_include_paths")})
                out[path] = "split"
            except SB.SplitFailed as e:
                out[path] = "fallback: " + str(e)
        print(json.dumps(out))
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "TORCH_CUDA_ARCH_LIST": "9.0a"}
    if not env.get("CUDA_HOME") and Path("/usr/local/cuda/include/cuda_runtime.h").exists():
        env["CUDA_HOME"] = "/usr/local/cuda"  # where nvcc's own headers are (nvcc on PATH may be a wrapper)
    fallback = REPO_ROOT / "bench" / "cuda_candidates" / "templated_relu_fallback.py"
    p = subprocess.run([CUDA_PYTHON, "-c", script, str(tmp_path), *map(str, CUDA_SOURCES), str(fallback)],
                       capture_output=True, text=True, env=env, timeout=1800)
    assert p.returncode == 0, p.stderr[-3000:]
    import json

    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert all(got[str(s)] == "split" for s in CUDA_SOURCES), got
    assert got[str(fallback)].startswith("fallback: a templated __global__ kernel"), got
    assert len(list(tmp_path.glob("lib/*/*.so"))) == len(CUDA_SOURCES)


def test_the_verdict_table_and_pages_say_which_build_ran():
    from kforge_core.evaluation.result import EvalResult
    from kforge_core.report import build_estimate, build_path, build_summary, verdict_table

    split = EvalResult(Verdict.CORRECT, ["ok"], stage_seconds={"build": 1.84},
                       build_notes=["split build: 1 kernel(s) by nvcc without torch headers (device 1.1 s)"])
    assert build_path(split) == ("split build", "1 kernel(s) by nvcc without torch headers (device 1.1 s)")
    assert build_summary(split).startswith("Build 1.8 s · split build")
    assert "Build 1.8 s · split build" in verdict_table(split)
    fell_back = EvalResult(Verdict.CORRECT, ["ok"], stage_seconds={"build": 28.8}, build_notes=[
        "split build not used: a templated __global__ kernel (its instantiations are chosen in host code)"])
    assert build_path(fell_back) == ("load_inline", "a templated __global__ kernel (its instantiations are chosen "
                                                    "in host code)")
    assert build_summary(EvalResult(Verdict.COMPILE_ERROR, ["x"])) == ""
    assert "median 3.0 s over 3" in build_estimate([2.0, 3.0, 31.0])
    assert "H100" in build_estimate([])
