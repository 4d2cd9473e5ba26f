"""Whose work is the speedup: the candidate's device time told apart as its own kernels, library work the
reference also does, and library work substituted for the reference's (issue 26).

Mechanism (measured, policy-free): one profiled forward of the reference and one of the candidate give, per
PyTorch operator called from outside any other operator, its calls and its device time (CPU: its time). An
operator instance the reference runs and the candidate does not is work the candidate **replaced**; one the
candidate runs and the reference does not is library work it **substituted**. A substitute stands in for a
replaced instance of the same family of work (GEMM/convolution/attention, activation, reduction, softmax,
normalisation, pooling: a `bmm` for an `mm`, a `clamp` for a `relu`), one call for one call; an operator of
another family (an extra `add` beside an own kernel) stands in for nothing.

What is left of the replaced work after the substitutes is what the candidate's own kernels must have done;
its share of the reference's operator time is `replaced_share`. Zero means its kernels replace none of the
reference's work (a token or copy kernel beside library calls), whatever operators it substitutes.

Known limit: a library call that fuses what it replaces (addmm for mm + add) counts the fused part as replaced.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

FAMILIES = [
    ("GEMM/convolution/attention", r"mm|bmm|addmm|addbmm|baddbmm|matmul|linear|bilinear|addmv|mv|dot|vdot|einsum|"
                                   r"tensordot|_scaled_mm|_?convolution\w*|conv\w*|cudnn_convolution\w*|"
                                   r"mkldnn_convolution\w*|_?slow_conv\w*|thnn_conv\w*|_nnpack\w*|"
                                   r"(?:_|)scaled_dot_product\w*|_flash_attention\w*|_efficient_attention\w*|"
                                   r"_?cudnn_rnn|lstm|gru|rnn_\w*"),
    ("activation", r"relu_?|relu6|clamp\w*|threshold\w*|hardtanh\w*|leaky_relu\w*|gelu\w*|silu\w*|sigmoid\w*|"
                   r"tanh\w*|elu\w*|selu|celu|softplus|mish\w*|hardswish\w*|hardsigmoid\w*|prelu|_prelu_kernel|"
                   r"rrelu\w*|maximum|minimum|where"),
    ("reduction", r"sum|mean|amax|amin|max|min|prod|norm|linalg_vector_norm|var\w*|std\w*|logsumexp|argmax|argmin|"
                  r"cumsum|cumprod"),
    ("softmax", r"_?softmax|_?log_softmax"),
    ("normalisation", r"\w*batch_norm\w*|\w*layer_norm\w*|\w*group_norm\w*|instance_norm|rms_norm|_fused_rms_norm"),
    ("pooling", r"\w*max_pool\w*|\w*avg_pool\w*|adaptive_\w*pool\w*"),
    ("data movement", r"clone|copy_|contiguous|_to_copy|to|cat|stack"),
]
# Support operators that move data: on a GPU, where they run a copy kernel (device time above zero), they are
# work the reference does (a ViT's patch extraction through reshape/contiguous), and an own kernel may replace
# them. Views and allocations never count, and on the CPU no support operator does (each has some CPU time).
COPY_OPS = {"aten::clone", "aten::copy_", "aten::contiguous", "aten::_to_copy", "aten::to"}
_FAMILY = [(name, re.compile(rf"^aten::(?:{rx})$")) for name, rx in FAMILIES]
HEAVY = FAMILIES[0][0]
# vendor-library GEMM / convolution / attention kernels launched by the candidate's own code (cuBLAS, cuDNN)
HEAVY_KERNEL = re.compile(r"gemm|xmma|nvjet|cutlass|cublas|cudnn|conv|wgrad|dgrad|fprop|implicit|flash|fmha", re.I)


def family(op: str) -> str:
    """The family of work an operator does; an operator of no listed family is a family of its own."""
    return next((name for name, rx in _FAMILY if rx.match(op)), op)


def _nested(e) -> bool:
    parent = getattr(e, "cpu_parent", None)
    while parent is not None:
        if (getattr(parent, "name", "") or "").startswith("aten::"):
            return True
        parent = getattr(parent, "cpu_parent", None)
    return False


def op_rows(prof, device_type: str, support_ops: set[str]) -> list[dict]:
    """Per PyTorch compute operator called from outside any other operator (support ops excluded): calls
    and time in us, the work done inside it included (device time on a GPU, CPU time on the CPU). Counting
    only the outermost call keeps one relu from counting as a relu and the clamp_min it runs."""
    calls, us = Counter(), defaultdict(float)
    for e in prof.events():
        name = getattr(e, "name", "") or ""
        if not name.startswith("aten::") or _nested(e):
            continue
        if name in support_ops and not (device_type == "cuda" and name in COPY_OPS):
            continue
        if device_type == "cuda":
            t = getattr(e, "device_time_total", None)
            if t is None:
                t = getattr(e, "cuda_time_total", 0.0)
        else:
            if not str(getattr(e, "device_type", "")).endswith("CPU"):
                continue
            t = e.cpu_time_total
        if t and t > 0:
            calls[name] += 1
            us[name] += float(t)
    return sorted(({"name": n, "calls": calls[n], "us": round(us[n], 2)} for n in calls),
                  key=lambda r: r["us"], reverse=True)


def direct_library(prof, own: set[str], is_own) -> dict:
    """GPU kernels that are neither the candidate's own nor launched by a PyTorch operator (cuBLAS/cuDNN called
    from its C++): heavy calls and microseconds."""
    from torch.autograd import DeviceType

    under_ops = set()
    for e in prof.events():
        if (getattr(e, "name", "") or "").startswith("aten::"):
            under_ops.update(getattr(k, "name", "") for k in getattr(e, "kernels", []) or [])
    heavy_calls, us = 0, 0.0
    for e in prof.events():
        if e.device_type == DeviceType.CPU or e.name in under_ops or is_own(e.name, own):
            continue
        if HEAVY_KERNEL.search(e.name):
            heavy_calls += 1
            us += e.time_range.elapsed_us()
    return {"heavy_calls": heavy_calls, "us": round(us, 2)}


def attribute(ref_ops: list[dict], cand_ops: list[dict], own_us: float | None = None,
              direct: dict | None = None) -> dict:
    """What the candidate replaced, substituted and kept of the reference's operators (rows as op_rows gives).

    Returns replaced_share (of the reference's operator time, what is left for the candidate's own kernels),
    and the evidence: kept (operators the candidate still runs as the reference does), replaced, substituted."""
    ref = {r["name"]: r for r in ref_ops}
    cand = {r["name"]: r for r in cand_ops}
    ref_total = sum(r["us"] for r in ref_ops)
    kept, replaced, substituted = [], [], []
    per_family = defaultdict(lambda: {"replaced_calls": 0, "replaced_us": 0.0, "substitute_calls": 0})
    for name in sorted(set(ref) | set(cand)):
        r_calls, c_calls = ref.get(name, {}).get("calls", 0), cand.get(name, {}).get("calls", 0)
        shared = min(r_calls, c_calls)
        f = per_family[family(name)]
        if shared:
            kept.append({"name": name, "calls": shared, "us": round(cand[name]["us"] * shared / c_calls, 2)})
        if r_calls > shared:
            n, t = r_calls - shared, ref[name]["us"] * (r_calls - shared) / r_calls
            replaced.append({"name": name, "calls": n, "us": round(t, 2)})
            f["replaced_calls"] += n
            f["replaced_us"] += t
        if c_calls > shared:
            n = c_calls - shared
            substituted.append({"name": name, "calls": n, "us": round(cand[name]["us"] * n / c_calls, 2)})
            f["substitute_calls"] += n
    if (direct or {}).get("heavy_calls"):
        per_family[HEAVY]["substitute_calls"] += direct["heavy_calls"]
        substituted.append({"name": "(vendor-library kernels called from the candidate's C++)",
                            "calls": direct["heavy_calls"], "us": direct.get("us", 0.0)})
    # within a family, each substitute call stands for one replaced call; the rest was the own kernels' work
    left = sum(f["replaced_us"] * max(0, f["replaced_calls"] - f["substitute_calls"]) / f["replaced_calls"]
               for f in per_family.values() if f["replaced_calls"])
    share = left / ref_total if ref_total > 0 else None
    return {"replaced_share": None if share is None else round(min(share, 1.0), 4),
            "reference_us": round(ref_total, 2), "own_us": None if own_us is None else round(own_us, 2),
            "kept": kept, "replaced": replaced, "substituted": substituted}


def describe(a: dict, limit: int = 4) -> str:
    """One line for a verdict or an agent: what the candidate's own kernels replaced, what it kept."""
    def names(rows):
        rows = sorted(rows, key=lambda r: r["us"], reverse=True)
        more = f" and {len(rows) - limit} more" if len(rows) > limit else ""
        return ", ".join(f"{r['name'].removeprefix('aten::')} x{r['calls']}" for r in rows[:limit]) + more

    parts = []
    if a.get("replaced_share") is not None:
        parts.append(f"its own kernels replaced {a['replaced_share']:.0%} of the reference's operator time")
    if a.get("replaced"):
        parts.append(f"replaced: {names(a['replaced'])}")
    if a.get("kept"):
        parts.append(f"kept from PyTorch/the library: {names(a['kept'])}")
    if a.get("substituted"):
        parts.append(f"library work substituted: {names(a['substituted'])}")
    return "; ".join(parts)
