"""Checks on a candidate's source before anything of it runs."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from kforge_core.backends.base import Backend
from kforge_core.evaluation.result import Verdict

MAX_SOURCE_BYTES = 1_000_000


@dataclass
class StaticFinding:
    verdict: Verdict
    message: str


def check_source(source: str, backend: Backend) -> StaticFinding | None:
    """None when the candidate may be built; otherwise the verdict and why."""
    if not source or not source.strip():
        return StaticFinding(Verdict.GENERATION_FAILURE, "empty program: the answer contained no code")
    if "\x00" in source:
        return StaticFinding(Verdict.STATIC_REJECTED, "the program contains NUL bytes (binary data, not source)")
    if len(source.encode("utf-8", "replace")) > MAX_SOURCE_BYTES:
        return StaticFinding(Verdict.STATIC_REJECTED,
                             f"the program is {len(source) // 1024} KiB; the limit is {MAX_SOURCE_BYTES // 1024} KiB")
    try:
        tree = ast.parse(source, filename="candidate.py")
    except SyntaxError as e:
        return StaticFinding(Verdict.COMPILE_ERROR, f"candidate.py:{e.lineno}: SyntaxError: {e.msg}")
    if not any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body):
        return StaticFinding(Verdict.STATIC_REJECTED, "no top-level `class ModelNew` in the program")
    if backend.kernel_markers and not backend.uses_custom_kernel(source):
        return StaticFinding(Verdict.STATIC_REJECTED,
                             f"no {backend.name} kernel is built: the {backend.name} backend requires a custom "
                             f"kernel ({backend.language}), not PyTorch operators alone")
    return None
