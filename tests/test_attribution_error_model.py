"""Issue 26's two judging mechanisms on recorded data: whose work the candidate's device time is
(judging/attribution.py) and the error model (judging/error_model.py)."""

import torch

from kforge_core.evaluation.judging import attribution as AT
from kforge_core.evaluation.judging import error_model as EM
from kforge_core.evaluation.judging.correctness import compare

# Per-operator rows as op_rows() records them from a profiled forward (self device time in us), shaped like
# an H100 trace of a KernelBench level-2 problem: a GEMM with a bias, then ReLU and a division.
REFERENCE = [{"name": "aten::addmm", "calls": 1, "us": 90.0}, {"name": "aten::relu", "calls": 1, "us": 5.0},
             {"name": "aten::div", "calls": 1, "us": 5.0}]


def test_an_epilogue_fused_around_the_library_gemm_is_honest_partial_replacement():
    a = AT.attribute(REFERENCE, [{"name": "aten::addmm", "calls": 1, "us": 91.0}], own_us=4.0)
    assert a["replaced_share"] == 0.1
    assert [k["name"] for k in a["kept"]] == ["aten::addmm"]
    assert "kept from PyTorch/the library: addmm x1" in AT.describe(a)


def test_a_gemm_written_as_another_library_op_still_counts_the_epilogue_as_replaced():
    a = AT.attribute(REFERENCE, [{"name": "aten::mm", "calls": 1, "us": 89.0}], own_us=6.0)
    assert a["replaced_share"] == 0.1  # mm stands for addmm (same heavy class, by calls); relu and div remain


def test_every_reference_instance_still_running_leaves_nothing_for_own_kernels():
    a = AT.attribute(REFERENCE, REFERENCE + [{"name": "aten::add", "calls": 1, "us": 1.0}], own_us=5.0)
    assert a["replaced_share"] == 0


def test_a_same_work_library_substitute_behind_a_copy_kernel_replaces_nothing():
    ref = [{"name": "aten::mm", "calls": 1, "us": 100.0}]
    a = AT.attribute(ref, [{"name": "aten::bmm", "calls": 1, "us": 80.0}], own_us=3.0)
    assert a["replaced_share"] == 0
    # ... and cuBLAS called from the candidate's own C++ is a substitute too
    a = AT.attribute(ref, [], own_us=3.0, direct={"heavy_calls": 1, "us": 95.0})
    assert a["replaced_share"] == 0


def test_a_substitute_of_the_same_family_replaces_nothing_one_of_another_family_is_no_substitute():
    ref = [{"name": "aten::relu", "calls": 1, "us": 10.0}]
    cand = [{"name": "aten::clamp", "calls": 1, "us": 10.0}, {"name": "aten::mul", "calls": 1, "us": 9.0}]
    assert AT.attribute(ref, cand, own_us=0.1)["replaced_share"] == 0  # clamp for relu behind a token kernel
    # an extra add beside an own ReLU kernel (an offset, a bias) does not do the ReLU's work
    assert AT.attribute(ref, [{"name": "aten::add", "calls": 1, "us": 12.0}], own_us=9.0)["replaced_share"] == 1.0
    ref = [{"name": "aten::_softmax", "calls": 1, "us": 50.0}]
    assert AT.attribute(ref, [{"name": "aten::sum", "calls": 1, "us": 4.0}], own_us=40.0)["replaced_share"] == 1.0


def test_instances_not_names_count_a_network_that_replaced_some_of_its_relus_replaced_work():
    ref = [{"name": "aten::cudnn_convolution", "calls": 4, "us": 400.0}, {"name": "aten::relu", "calls": 4, "us": 40.0}]
    cand = [{"name": "aten::cudnn_convolution", "calls": 4, "us": 401.0}, {"name": "aten::relu", "calls": 2, "us": 20.0}]
    a = AT.attribute(ref, cand, own_us=18.0)
    assert a["replaced_share"] == round(20 / 440, 4)
    assert a["replaced"] == [{"name": "aten::relu", "calls": 2, "us": 20.0}]


def test_a_copy_the_reference_makes_and_an_own_kernel_does_instead_is_replaced_work():
    # a ViT's patch extraction: the reference copies through reshape/contiguous, the candidate's kernel does it
    ref = [{"name": "aten::contiguous", "calls": 1, "us": 30.0}, {"name": "aten::addmm", "calls": 1, "us": 70.0}]
    a = AT.attribute(ref, [{"name": "aten::addmm", "calls": 1, "us": 70.0}], own_us=25.0)
    assert a["replaced_share"] == 0.3
    # a copy kernel beside the full set of library calls still replaces nothing
    assert AT.attribute(ref, ref, own_us=25.0)["replaced_share"] == 0


def test_the_pytorch_fallback_rule_counts_instances():
    from collections import Counter

    from kforge_core.evaluation.judging.anticheat import fallback_violation

    ref = Counter({"aten::relu": 4, "aten::convolution": 4, "aten::view": 3})
    assert fallback_violation(ref, Counter({"aten::relu": 4, "aten::convolution": 4}))
    assert fallback_violation(ref, Counter({"aten::relu": 2, "aten::convolution": 4})) is None


def _sequential_sum_rows(x: torch.Tensor) -> torch.Tensor:
    """Each row summed strictly left to right in fp32 (one thread per row, as a naive matvec kernel does)."""
    acc = torch.zeros(x.shape[0])
    for j in range(x.shape[1]):
        acc += x[:, j]
    return acc.unsqueeze(1)


def test_an_honest_long_fp32_reduction_passes_and_the_fixed_tolerance_did_not():
    g = torch.Generator().manual_seed(0)
    x = 4 * torch.randn(64, 1 << 17, generator=g) * torch.randn(1 << 17, generator=g)  # a matvec's products
    x[0] -= x[0].double().mean().float()  # one output near zero, as a few of KernelBench's matvec outputs are
    ref32 = x.sum(dim=1, keepdim=True)
    ref64 = x.double().sum(dim=1, keepdim=True)
    cand = _sequential_sum_rows(x)
    old = compare(ref32, cand, {"float32": (1e-3, 1e-3)})  # the fixed tolerance: ~1e-3 of error near zero
    assert not old.passed and old.max_abs_err > 1e-3
    c = compare(ref32, cand, {"float32": (1e-3, 1e-3)}, ref64)
    assert c.passed, c.message
    leaf = c.error_model["leaves"][0]
    assert c.error_model["model"] == "float64 reference" and leaf["norm_error"] < leaf["norm_allowance"]


def test_a_small_scalar_that_is_wrong_fails_whatever_its_size():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(1 << 20, generator=g)
    ref32, ref64 = (x * 1e-4).mean(), (x.double() * 1e-4).mean()
    wrong = (x[: x.numel() // 2] * 1e-4).mean()
    assert compare(ref32, wrong, {"float32": (1e-3, 1e-3)}).passed  # inside atol 1e-3: the old verdict
    c = compare(ref32, wrong, {"float32": (1e-3, 1e-3)}, ref64)
    assert not c.passed and "float64 reference" in c.message
    honest = x.view(1024, 1024).double().sum(1).float().sum() * 1e-4 / x.numel()  # another order, fp32 result
    assert compare(ref32, honest.float(), {"float32": (1e-3, 1e-3)}, ref64).passed


def test_a_lower_precision_shortcut_beyond_the_dtype_allowance_fails_and_specials_must_match():
    g = torch.Generator().manual_seed(2)
    a, b = torch.randn(128, 256, generator=g), torch.randn(256, 128, generator=g)
    ref32, ref64 = a @ b, a.double() @ b.double()
    tf32_like = (a.to(torch.bfloat16) @ b.to(torch.bfloat16)).float()  # 8-bit mantissa: ~4e-3 relative
    assert not compare(ref32, tf32_like, {"float32": (1e-3, 1e-3)}, ref64).passed
    ref32[0, 0] = ref64[0, 0] = float("nan")
    cand = ref32.clone()
    assert compare(ref32, cand, {"float32": (1e-3, 1e-3)}, ref64).passed
    cand[0, 0] = 0.0
    assert not compare(ref32, cand, {"float32": (1e-3, 1e-3)}, ref64).passed


def test_without_a_float64_reference_the_fixed_tolerance_decides_and_says_why():
    r = torch.ones(8)
    c = compare(r, r + 5e-4, {"float32": (1e-3, 1e-3)}, None, "the reference does not run in float64")
    assert c.passed and c.error_model == {"model": "fixed tolerance", "why": "the reference does not run in float64"}
    assert EM.widened([torch.ones(2, dtype=torch.float16), torch.ones(2, dtype=torch.int64)])[0].dtype == torch.float64
