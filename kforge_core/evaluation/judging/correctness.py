"""Structural then numerical comparison of a candidate's outputs with the reference's."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch


@dataclass
class Comparison:
    structure_ok: bool
    passed: bool
    message: str = ""
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    mismatch_fraction: float | None = None
    worst: str = ""
    # how values were judged (error_model.py): "float64 reference" with the measured errors and allowances, or
    # "fixed tolerance" and why
    error_model: dict | None = None


def flatten(obj, path: str = "output") -> list[tuple[str, object]]:
    if isinstance(obj, (tuple, list)):
        return [item for i, o in enumerate(obj) for item in flatten(o, f"{path}[{i}]")]
    return [(path, obj)]


def check_reference_outputs(obj) -> str | None:
    """The problem's own outputs must be tensors (possibly nested in tuples/lists)."""
    for path, leaf in flatten(obj):
        if not isinstance(leaf, torch.Tensor):
            return f"Model.forward returned {type(leaf).__name__} at {path}; outputs must be tensors"
    return None


CHUNK = 1 << 22  # elements compared per step: the comparison's temporaries stay ~0.1 GB whatever the output


def validate_output(cand, ref_device: torch.device | None = None) -> str | None:
    """Before anything reads a candidate's output: only plain torch.Tensor leaves (exact type: a subclass or
    wrapper can fake comparisons, defer its values, or crash code that reads its storage), nested in
    lists/tuples, on the expected device. Returns what is wrong, or None."""
    for path, leaf in flatten(cand):
        if type(leaf) is not torch.Tensor:
            kind = type(leaf)
            what = f"{kind.__module__}.{kind.__qualname__}"
            hint = " (a Tensor subclass)" if isinstance(leaf, torch.Tensor) else ""
            return f"{path} is a {what}{hint}; outputs must be plain torch.Tensor objects"
        if ref_device is not None and leaf.device.type != ref_device.type:
            return f"{path} is on {leaf.device}, expected {ref_device.type}"
    return None


def compare(ref, cand, tolerances: dict[str, tuple[float, float]], ref64=None, fixed_why: str = "") -> Comparison:
    """Structure first, then values: against `ref64` (the reference run in float64) by the error model where
    it is given, else by the fixed atol/rtol of `tolerances`."""
    ref_leaves, cand_leaves = flatten(ref), flatten(cand)
    if len(ref_leaves) != len(cand_leaves):
        return Comparison(False, False, f"expected {len(ref_leaves)} output tensor(s), got {len(cand_leaves)}")
    for (path, r), (_, c) in zip(ref_leaves, cand_leaves):
        if type(c) is not torch.Tensor:
            return Comparison(False, False, f"{path}: expected a plain torch.Tensor, got {type(c).__name__}")
        if tuple(c.shape) != tuple(r.shape):
            return Comparison(False, False, f"{path}: expected shape {tuple(r.shape)}, got {tuple(c.shape)}")
        if c.dtype != r.dtype:
            return Comparison(False, False, f"{path}: expected dtype {r.dtype}, got {c.dtype}")
        if c.device.type != r.device.type:
            return Comparison(False, False, f"{path}: expected device {r.device.type}, got {c.device.type}")

    from kforge_core.evaluation.judging import error_model as EM

    wide = flatten(ref64) if ref64 is not None else None
    if wide is not None and (len(wide) != len(ref_leaves) or any(
            not isinstance(w, torch.Tensor) or tuple(w.shape) != tuple(r.shape) for (_, w), (_, r) in zip(wide, ref_leaves))):
        wide, fixed_why = None, "the float64 reference's outputs differ in structure"
    worst_abs = worst_rel = 0.0
    worst_where, mismatched, total, failed = "", 0, 0, []
    judged = []  # error-model figures per leaf
    for k, ((path, r), (_, c)) in enumerate(zip(ref_leaves, cand_leaves)):
        atol, rtol = tolerances.get(str(r.dtype).replace("torch.", ""), (1e-3, 1e-3))
        if r.numel() == 0:
            continue
        if wide is not None and (r.is_floating_point() or r.is_complex()):
            j = EM.judge_leaf(r, wide[k][1], c, rtol)
            judged.append({"output": path, **{x: j[x] for x in ("elements_outside", "norm_error", "norm_allowance",
                                                                 "reference_error_max", "worst_allowance")}})
            if not j["passed"]:
                why = (f"{j['elements_outside']}/{r.numel()} elements outside the allowance" if j["elements_outside"]
                       else f"norm-wise error {j['norm_error']:.3g} over its allowance {j['norm_allowance']:.3g}")
                failed.append(f"{path}: {why} (float64 reference; worst element expected {j['worst_expected']:.6g}, "
                              f"got {j['worst_got']:.6g}, allowed +-{j['worst_allowance']:.3g}; the fp32 reference's "
                              f"own error is up to {j['reference_error_max']:.3g})")
                mismatched += max(j["elements_outside"], 1)
        n_bad, leaf_abs, leaf_rel, where = _compare_leaf(r.detach(), c.detach(), atol, rtol)
        if wide is not None and (r.is_floating_point() or r.is_complex()):
            n_bad = 0  # the error model decided above; the figures below describe the error vs the fp32 reference
        mismatched += n_bad
        total += r.numel()
        if leaf_abs >= worst_abs:
            worst_abs = leaf_abs
            pos = tuple(int(i) for i in torch.unravel_index(torch.tensor(where[0]), r.shape))
            worst_where = f"{path}{list(pos)}: expected {where[1]:.6g}, got {where[2]:.6g}"
        worst_rel = max(worst_rel, leaf_rel)
        if n_bad:
            failed.append(f"{path}: {n_bad}/{r.numel()} elements outside atol={atol:g}, rtol={rtol:g}")
    passed = mismatched == 0
    model = ({"model": "float64 reference", "K": EM.K, "leaves": judged} if judged else
             {"model": "fixed tolerance", "why": fixed_why or "no floating-point output"})
    return Comparison(True, passed, "; ".join(failed), worst_abs, worst_rel,
                      mismatched / total if total else 0.0, worst_where, model)


def _work_dtype(dtype: torch.dtype) -> torch.dtype:
    """float64 stays float64; every other type is compared in float32 (exact for the half types and for
    integers up to 2^24; larger integers go through float64), chunk by chunk."""
    if dtype in (torch.float64, torch.complex128, torch.int64, torch.int32, torch.uint32, torch.uint64):
        return torch.float64
    return torch.float32


def _compare_leaf(r: torch.Tensor, c: torch.Tensor, atol: float, rtol: float):
    """(mismatches, worst abs error, worst rel error, (flat index, expected, got)) over chunks."""
    pairs = r.is_complex()  # complex values compared as (real, imag) pairs
    if pairs:
        r, c = torch.view_as_real(r), torch.view_as_real(c)
    rf, cf = r.contiguous().reshape(-1), c.contiguous().reshape(-1)
    wd = _work_dtype(r.dtype)
    n_bad, worst_abs, worst_rel, where = 0, -1.0, 0.0, (0, 0.0, 0.0)
    for start in range(0, rf.numel(), CHUNK):
        rd, cd = rf[start:start + CHUNK].to(wd), cf[start:start + CHUNK].to(wd)
        diff = (cd - rd).abs()
        diff = torch.where((torch.isnan(rd) & torch.isnan(cd)) | (rd == cd), 0.0, diff)  # inf == inf matches
        diff = torch.nan_to_num(diff, nan=math.inf)
        n_bad += int((diff > atol + rtol * rd.abs().nan_to_num(nan=0.0, posinf=0.0)).sum())
        worst_rel = max(worst_rel, float(torch.nan_to_num(diff / rd.abs().clamp_min(1e-12), nan=math.inf).max()))
        i = int(diff.argmax())
        d = float(diff[i])
        if d > worst_abs:
            worst_abs, where = d, (start + i, float(rd[i]), float(cd[i]))
        del rd, cd, diff
    if pairs:
        where = (where[0] // 2, *where[1:])
    return n_bad, max(worst_abs, 0.0), worst_rel, where
