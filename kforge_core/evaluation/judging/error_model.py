"""The error model: how far a candidate's output may be from the exact result (issue 26).

One atol/rtol for every problem errs both ways: an honest fp32 reduction over 10^5 terms misses a fixed 1e-3 on
a few elements, while a scalar output of 1e-4 that is 96 % wrong hides under an absolute 1e-2. So outputs are
judged against a float64 run of the same reference (same weights, inputs widened), and the allowance is tied
to what honest arithmetic did on this very computation:

    allowance_i = K * max_j |ref32_j - ref64_j|  +  rtol * (|ref64_i| + rms(ref64))  +  floor
    ||cand - ref64||_2 <= K * ||ref32 - ref64||_2  +  rtol * ||ref64||_2  +  floor * sqrt(n)

The first term is the fp32 (or fp16 ...) reference's own rounding error on this problem, times K for a
different but honest order of operations (a long reduction summed sequentially, fused multiply-adds); the
second is the dtype's precision allowance (settings.tolerances' rtol: fp32 1e-3, so TF32 or a fast-math
exp passes), relative to the element and to the output's own scale, never an absolute number; the floor is the
dtype's smallest normal number, for outputs that are exactly zero. Elementwise and norm-wise must both
hold. Where the reference cannot run in float64 (an operator without a double kernel, integer outputs, not
enough memory), the fixed atol/rtol of settings.tolerances is used and the verdict says so.
"""

from __future__ import annotations

import math

import torch

K = 32.0  # a sequential fp32 sum vs the reference's blocked one: ~sqrt(n)/log2(n), 21x at n = 2^17
def floor(dtype: torch.dtype) -> float:
    """The dtype's smallest normal number: the allowance of an output that is exactly zero everywhere (any
    honest rounding residue shows in the reference's own error term instead). Never an absolute tolerance: a
    scalar of 1e-7 that is 50 % wrong must fail."""
    try:
        return float(torch.finfo(dtype).tiny)
    except TypeError:
        return 1e-30
CHUNK = 1 << 22


def widened(obj):
    """Floating tensors as float64 (complex as complex128), nested as given; the rest unchanged."""
    if isinstance(obj, (list, tuple)):
        return type(obj)(widened(o) for o in obj)
    if isinstance(obj, torch.Tensor):
        if obj.is_complex():
            return obj.to(torch.complex128)
        if obj.is_floating_point():
            return obj.to(torch.float64)
    return obj


def float64_bytes(inputs, outputs_bytes: int) -> int:
    """What a float64 run adds, roughly: widened inputs and outputs."""
    from kforge_core.evaluation.judging.anticheat import tensors

    return sum(t.numel() * 8 for _, t in tensors(inputs) if t.is_floating_point()) + 2 * outputs_bytes


def _stats(r: torch.Tensor, x: torch.Tensor | None) -> tuple[float, float, float]:
    """(max |x - r|, sum (x - r)^2, sum r^2) in float64, chunked; x None: only sum r^2."""
    rf = r.detach().reshape(-1)
    xf = None if x is None else x.detach().reshape(-1)
    mx = sq = rr = 0.0
    for s in range(0, rf.numel(), CHUNK):
        rd = rf[s:s + CHUNK].to(torch.float64)
        rd = torch.nan_to_num(rd, nan=0.0, posinf=0.0, neginf=0.0)
        rr += float((rd * rd).sum())
        if xf is not None:  # the reference's own rounding error, where both values are finite
            raw = rf[s:s + CHUNK].to(torch.float64)
            xd = xf[s:s + CHUNK].to(torch.float64)
            d = torch.where(torch.isfinite(raw) & torch.isfinite(xd), (xd - raw).abs(), 0.0)
            mx = max(mx, float(d.max()))
            sq += float((d * d).sum())
    return mx, sq, rr


def judge_leaf(ref32: torch.Tensor, ref64: torch.Tensor, cand: torch.Tensor, rtol: float) -> dict:
    """Measured errors and allowances of one output tensor, and whether it passes.
    NaN/inf where the float64 reference has them must be matched exactly (same positions, same signs)."""
    if ref32.is_complex():
        ref32, ref64, cand = torch.view_as_real(ref32), torch.view_as_real(ref64), torch.view_as_real(cand)
    n = ref64.numel()
    ref_err_max, ref_err_sq, ref_sq = _stats(ref64, ref32)
    tiny = floor(ref32.dtype)
    rms = math.sqrt(ref_sq / n) if n else 0.0
    base = K * ref_err_max + tiny
    rf, cf = ref64.reshape(-1), cand.detach().reshape(-1)
    bad, worst_excess, worst = 0, -math.inf, (0, 0.0, 0.0, 0.0)
    err_sq = 0.0
    for s in range(0, n, CHUNK):
        rd, cd = rf[s:s + CHUNK].to(torch.float64), cf[s:s + CHUNK].to(torch.float64)
        same_special = (torch.isnan(rd) & torch.isnan(cd)) | (torch.isinf(rd) & (rd == cd))
        diff = torch.where(same_special, 0.0, (cd - rd).abs())
        diff = torch.nan_to_num(diff, nan=math.inf)
        allow = base + rtol * (rd.abs().nan_to_num(nan=0.0, posinf=0.0) + rms)
        bad += int((diff > allow).sum())
        finite = torch.where(torch.isinf(diff), 0.0, diff)
        err_sq += float((finite * finite).sum()) + (math.inf if torch.isinf(diff).any() else 0.0)
        excess = diff / allow
        i = int(excess.argmax())
        if float(excess[i]) > worst_excess:
            worst_excess, worst = float(excess[i]), (s + i, float(rd[i]), float(cd[i]), float(allow[i]))
        del rd, cd, diff, allow, excess, finite
    norm_err = math.sqrt(err_sq)
    norm_allow = K * math.sqrt(ref_err_sq) + rtol * math.sqrt(ref_sq) + tiny * math.sqrt(n)
    return {"elements_outside": bad, "norm_error": norm_err, "norm_allowance": norm_allow,
            "reference_error_max": ref_err_max, "rms": rms, "worst_index": worst[0], "worst_expected": worst[1],
            "worst_got": worst[2], "worst_allowance": worst[3],
            "passed": bad == 0 and norm_err <= norm_allow}
