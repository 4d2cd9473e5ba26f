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


def compare(ref, cand, tolerances: dict[str, tuple[float, float]]) -> Comparison:
    ref_leaves, cand_leaves = flatten(ref), flatten(cand)
    if len(ref_leaves) != len(cand_leaves):
        return Comparison(False, False, f"expected {len(ref_leaves)} output tensor(s), got {len(cand_leaves)}")
    for (path, r), (_, c) in zip(ref_leaves, cand_leaves):
        if not isinstance(c, torch.Tensor):
            return Comparison(False, False, f"{path}: expected a Tensor, got {type(c).__name__}")
        if type(c) is not type(r) and type(c) is not torch.Tensor:
            # a Tensor subclass can fake comparisons (__torch_function__, lazy values): plain tensors only
            return Comparison(False, False, f"{path}: expected a plain torch.Tensor, got {type(c).__name__}")
        if tuple(c.shape) != tuple(r.shape):
            return Comparison(False, False, f"{path}: expected shape {tuple(r.shape)}, got {tuple(c.shape)}")
        if c.dtype != r.dtype:
            return Comparison(False, False, f"{path}: expected dtype {r.dtype}, got {c.dtype}")
        if c.device.type != r.device.type:
            return Comparison(False, False, f"{path}: expected device {r.device.type}, got {c.device.type}")

    worst_abs = worst_rel = 0.0
    worst_where, mismatched, total, failed = "", 0, 0, []
    for (path, r), (_, c) in zip(ref_leaves, cand_leaves):
        atol, rtol = tolerances.get(str(r.dtype).replace("torch.", ""), (1e-3, 1e-3))
        if r.numel() == 0:
            continue
        if r.dtype.is_floating_point or r.dtype.is_complex:
            rd, cd = r.detach().double(), c.detach().double()
        else:
            rd, cd = r.detach().to(torch.float64), c.detach().to(torch.float64)
        both_nan = torch.isnan(rd) & torch.isnan(cd)
        diff = (cd - rd).abs()
        diff = torch.where(both_nan | (rd == cd), torch.zeros_like(diff), diff)  # inf == inf is a match
        diff = torch.nan_to_num(diff, nan=math.inf)
        bad = diff > (atol + rtol * rd.abs().nan_to_num(nan=0.0, posinf=0.0))
        rel = diff / rd.abs().clamp_min(1e-12)
        n_bad = int(bad.sum())
        mismatched += n_bad
        total += r.numel()
        idx = int(diff.flatten().argmax())
        d = float(diff.flatten()[idx])
        if d >= worst_abs:
            worst_abs = d
            pos = tuple(int(i) for i in torch.unravel_index(torch.tensor(idx), r.shape))
            worst_where = (f"{path}{list(pos)}: expected {float(rd.flatten()[idx]):.6g}, "
                           f"got {float(cd.flatten()[idx]):.6g}")
        worst_rel = max(worst_rel, float(torch.nan_to_num(rel, nan=math.inf).max()))
        if n_bad:
            failed.append(f"{path}: {n_bad}/{r.numel()} elements outside atol={atol:g}, rtol={rtol:g}")
    passed = mismatched == 0
    return Comparison(True, passed, "; ".join(failed), worst_abs, worst_rel,
                      mismatched / total if total else 0.0, worst_where)
