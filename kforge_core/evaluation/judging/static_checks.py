"""Checks on a candidate's source before anything of it runs.

Strictness (EvalSettings.strictness):
- "off":     structure only (non-empty text, parses, defines class ModelNew);
- "lenient": + the backend's own kernel must be built, no monkey-patching, no reaching for the reference;
- "strict":  + no file/network/process/thread access, no dynamic code, no try/except fallbacks, no side
             streams, and the same for the native (C++/CUDA/MSL) source text.
Every rule has an adversarial candidate under tests/adversarial/ that proves it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from kforge_core.backends.base import Backend
from kforge_core.evaluation.result import Verdict

MAX_SOURCE_BYTES = 1_000_000
STRICTNESS = ("off", "lenient", "strict")

# Modules whose attributes a candidate must never assign (the harness and the reference use them).
PATCHABLE_ROOTS = {"torch", "nn", "F", "np", "numpy", "time", "math", "os", "sys", "builtins", "triton", "tl",
                   "functools", "operator", "kforge_core"}
REFERENCE_NAMES = {"kforge_reference", "kforge_core", "__main__"}
FORBIDDEN_MODULES = {"socket", "urllib", "http", "requests", "httpx", "subprocess", "multiprocessing", "threading",
                     "concurrent", "asyncio", "ctypes", "cffi", "resource", "signal", "shutil", "gc", "inspect",
                     "importlib", "builtins", "pickle", "marshal", "tempfile", "glob", "pathlib", "io", "mmap"}
FORBIDDEN_CALLS = {"open", "eval", "exec", "compile", "__import__", "globals", "locals", "vars", "breakpoint",
                   "input", "setattr", "delattr"}
FORBIDDEN_OS_ATTRS = re.compile(r"^(system|popen|fork|forkpty|spawn\w*|exec\w*|kill\w*|remove|unlink|rmdir|"
                                r"rename|replace|open|write|read|listdir|scandir|walk|_exit|chdir|putenv|truncate)$")
SIDE_STREAM = re.compile(r"torch\.cuda\.(Stream|stream|ExternalStream)\b|cudaStreamCreate|cudaStreamNonBlocking|"
                         r"\.new_stream\(")
NATIVE_FORBIDDEN = re.compile(r"\b(fork|vfork|system|popen|execv\w*|execl\w*|dlopen|fopen|freopen|socket|"
                              r"pthread_create)\s*\(|std::(thread|async|jthread)\b|\b[io]?fstream\b")


# Native code that runs Python or changes Python objects: an extension can patch the harness's timers or
# checks from C++ as easily as from Python (a cheap first line; the parent's clock is the real defence).
NATIVE_ENTERS_PYTHON = re.compile(r"\bPy(?:Run|Import|Eval|Object_SetAttr\w*|Object_SetItem|Dict_SetItem\w*|"
                                  r"Module_AddObject\w*|Sys_SetObject)\w*\s*\(|\b(?:py|pybind11)::(?:exec|eval\w*|"
                                  r"module_?::import|globals|builtins)\b|\.attr\s*\([^()]*\)\s*=[^=]")


@dataclass
class StaticFinding:
    verdict: Verdict
    message: str


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _rule_violations(tree: ast.Module, source: str, strict: bool) -> list[str]:
    found: list[str] = []
    for node in ast.walk(tree):
        # monkey-patching: assigning or deleting attributes of torch / the harness / stdlib modules
        targets = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for t in targets:
            for sub in ast.walk(t):
                if isinstance(sub, ast.Attribute) and _root_name(sub) in PATCHABLE_ROOTS:
                    found.append(f"line {node.lineno}: monkey-patches `{_dotted(sub)}`")
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for m in mods:
                top = m.split(".")[0]
                if top in REFERENCE_NAMES:
                    found.append(f"line {node.lineno}: imports the reference or the harness (`{m}`)")
                elif strict and top in FORBIDDEN_MODULES:
                    found.append(f"line {node.lineno}: imports `{m}` (file, network, process or introspection "
                                 "access is not allowed)")
        if isinstance(node, ast.ClassDef) and node.name == "ModelNew":
            for base in node.bases:
                if _dotted(base).split(".")[-1] == "Model" or _root_name(base) in REFERENCE_NAMES:
                    found.append(f"line {node.lineno}: ModelNew subclasses the reference `{_dotted(base)}`")
        if isinstance(node, ast.Attribute) and _dotted(node) in ("sys.modules", "sys._getframe"):
            found.append(f"line {node.lineno}: reaches into `{_dotted(node)}`")
        if isinstance(node, ast.Name) and node.id in REFERENCE_NAMES - {"kforge_core"}:
            found.append(f"line {node.lineno}: refers to `{node.id}`")
        if not strict:
            continue
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name in FORBIDDEN_CALLS:
                found.append(f"line {node.lineno}: calls `{name}()`")
            elif name.startswith("os.") and FORBIDDEN_OS_ATTRS.match(name.split(".", 1)[1]):
                found.append(f"line {node.lineno}: calls `{name}()` (process or file access)")
        if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            found.append(f"line {node.lineno}: try/except can hide a failing kernel behind a fallback")
    if strict:
        for m in SIDE_STREAM.finditer(source):
            line = source.count("\n", 0, m.start()) + 1
            found.append(f"line {line}: uses a side CUDA stream (`{m.group(0)}`); kernels must run on the "
                         "current stream, which is the one timed")
        for m in NATIVE_FORBIDDEN.finditer(source):
            line = source.count("\n", 0, m.start()) + 1
            found.append(f"line {line}: native code calls `{m.group(0).strip()}` (processes, threads or files)")
        for m in NATIVE_ENTERS_PYTHON.finditer(source):
            line = source.count("\n", 0, m.start()) + 1
            found.append(f"line {line}: native code enters the Python interpreter (`{m.group(0).strip()}`): it "
                         "could patch the harness")
    return list(dict.fromkeys(found))


def check_source(source: str, backend: Backend, strictness: str = "strict") -> StaticFinding | None:
    """None when the candidate may be built; otherwise the verdict and why."""
    if strictness not in STRICTNESS:
        raise ValueError(f"strictness must be one of {STRICTNESS}, got {strictness!r}")
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
    if strictness == "off":
        return None
    if backend.kernel_markers and not backend.uses_custom_kernel(source):
        return StaticFinding(Verdict.STATIC_REJECTED,
                             f"no {backend.name} kernel is built: the {backend.name} backend requires a custom "
                             f"kernel ({backend.language}), not PyTorch operators alone")
    violations = _rule_violations(tree, source, strictness == "strict")
    if violations:
        more = f" (and {len(violations) - 3} more)" if len(violations) > 3 else ""
        return StaticFinding(Verdict.STATIC_REJECTED, "rule violated: " + "; ".join(violations[:3]) + more)
    return None
