"""Faster builds of load_inline extensions, installed in the worker before the candidate is imported.

Almost all of a cold CUDA build is the compilers parsing torch's headers, not the candidate's code
(measured: bench/results/*/build_phases.log). Two changes cut that without touching what the kernel does:

* CUDA sources get <torch/types.h> (load_inline prepends it) instead of <torch/extension.h>, which adds the
  whole C++ frontend (nn, optim, autograd, jit) and pybind11 to a file that needs none of it. nvcc parses
  that text twice (device and host), so this halves the .cu's compile time. A source that uses anything
  only extension.h declares is left alone, and if the lighter build fails on a missing declaration the
  original source is built instead, so a candidate never fails because of this.
* main.cpp (the bindings, which do need extension.h) includes a precompiled torch/extension.h: built
  once per compiler flags and torch install, beside the caches, then reused by every later build.

Both only change compile time; the compiled kernel code is the candidate's, compiled with its own flags.
"""

from __future__ import annotations

import fcntl
import hashlib
import inspect
import os
import re
import resource
import shlex
import subprocess
import tempfile
from pathlib import Path

BACKENDS = ("cuda", "cpu")  # the backends whose candidates build with load_inline
_EXTENSION_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]torch/extension\.h[>"][^\n]*$', re.M)
# Names that only torch/extension.h (torch/all.h + torch/python.h) brings, not torch/types.h.
_NEEDS_EXTENSION_H = re.compile(
    r"PYBIND11|pybind11|\bpy::|TORCH_LIBRARY|\bTHP|torch::(?:nn|autograd|jit|optim|data|serialize|python|cuda|"
    r"mps|xpu|fft|linalg|special|nested|sparse|NoGradGuard|AutoGradMode|InferenceMode|manual_seed|Library)\b")
# Compiler messages of a missing declaration: the only failures worth a second build with extension.h.
_MISSING_DECLARATION = re.compile(r"has no member|is undefined|not a member of|was not declared|does not name a "
                                  r"type|incomplete type|no template named|undeclared identifier")


def lighten_cuda_sources(sources: str | list[str] | None) -> list[str] | None:
    """The CUDA sources with torch/extension.h includes swapped for a comment (so line numbers stay), or
    None when there is nothing to swap or the sources need extension.h."""
    if not sources:
        return None
    parts = [sources] if isinstance(sources, str) else list(sources)
    text = "\n".join(parts)
    if not _EXTENSION_INCLUDE.search(text) or _NEEDS_EXTENSION_H.search(text):
        return None
    return [_EXTENSION_INCLUDE.sub("// torch/extension.h: torch/types.h is enough here (KForge fast build)", p)
            for p in parts]


def missing_declaration(error_text: str) -> bool:
    return bool(_MISSING_DECLARATION.search(error_text))


# -- precompiled torch/extension.h ----------------------------------------------------------------------

def main_cpp_flags(name: str, extra_cflags: list[str], extra_include_paths: list[str], with_cuda: bool) -> list[str] | None:
    """The flags load_inline will compile main.cpp with, read from the ninja file torch writes for them
    (a private torch function: on any mismatch there is simply no precompiled header)."""
    from torch.utils import cpp_extension as ce

    write = getattr(ce, "_write_ninja_file_to_build_library", None)
    if write is None:
        return None
    with tempfile.TemporaryDirectory() as d:
        args = {"path": os.path.join(d, "build.ninja"), "name": name, "sources": [os.path.join(d, "main.cpp")],
                "extra_cflags": list(extra_cflags), "extra_cuda_cflags": [], "extra_sycl_cflags": [],
                "extra_ldflags": [], "extra_include_paths": list(extra_include_paths), "with_cuda": with_cuda,
                "with_sycl": False, "is_standalone": False}
        try:
            params = inspect.signature(write).parameters
            if not {"path", "name", "sources", "extra_cflags", "with_cuda"} <= set(params):
                return None
            write(**{k: v for k, v in args.items() if k in params})
            line = next(l for l in Path(args["path"]).read_text().splitlines() if l.startswith("cflags = "))
        except Exception:
            return None
    return [f for f in shlex.split(line[len("cflags = "):]) if not f.startswith("-DTORCH_EXTENSION_NAME=")]


def pch_header(pch_root: Path, cxx: str, flags: list[str], headers=("torch/extension.h",)) -> tuple[Path, bool]:
    """(header to -include, whether its .gch exists) for these flags and headers; the folder is keyed by
    compiler, flags and torch build, since gcc only uses a PCH built with the same options."""
    import torch

    key = hashlib.sha256(repr((cxx, flags, torch.__version__, torch.__file__, tuple(headers))).encode()).hexdigest()[:16]
    d = pch_root / key
    d.mkdir(parents=True, exist_ok=True)
    header = d / "kforge_torch_extension.h"
    if not header.exists():
        tmp = d / f".h.{os.getpid()}"
        tmp.write_text("".join(f"#include <{h}>\n" for h in headers))
        os.replace(tmp, header)
    return header, (d / (header.name + ".gch")).exists()


def start_pch_build(header: Path, cxx: str, flags: list[str]) -> subprocess.Popen | None:
    """Compile the header in the background; returns None when another process is already at it."""
    lock = open(header.parent / "lock", "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        return None
    for stale in header.parent.glob(".gch.*"):  # left by a build that was killed; we hold the lock
        stale.unlink(missing_ok=True)
    tmp = header.parent / f".gch.{os.getpid()}"
    gch = header.parent / (header.name + ".gch")
    script = f"{shlex.join([cxx, '-x', 'c++-header', str(header), '-o', str(tmp), *flags])} && mv -f {shlex.quote(str(tmp))} {shlex.quote(str(gch))}"

    def allow_large_file():  # the worker caps files at its output limit; the PCH is larger
        _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))

    p = subprocess.Popen(["sh", "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         preexec_fn=allow_large_file, pass_fds=(lock.fileno(),))
    lock.close()  # the child holds the lock (inherited descriptor) until it exits
    return p


# load_inline arguments the split build takes; any other one (build_directory, no_implicit_headers, use_pch,
# ...) means the call is built as written. verbose and with_pytorch_error_handling change no program.
SPLIT_ARGS = {"functions", "extra_cflags", "extra_cuda_cflags", "extra_ldflags", "extra_include_paths", "with_cuda"}
SPLIT_IGNORES = {"verbose", "with_pytorch_error_handling", "keep_intermediates"}


class FastLoadInline:
    """A drop-in for torch.utils.cpp_extension.load_inline: the split build (split_build.py) where it applies,
    else load_inline with the two speed-ups below."""

    def __init__(self, original, pch_root: Path | None, notes: list[str], split_root: Path | None = None):
        self.original, self.pch_root, self.notes = original, pch_root, notes
        self.split_root = split_root
        self.pch_jobs: list[subprocess.Popen] = []
        self.split_seconds: dict[str, float] = {}
        self.calls = 0  # load_inline calls seen (the worker builds ModelNew ahead when import made none)

    def __call__(self, name, cpp_sources, cuda_sources=None, *args, **kwargs):
        self.calls += 1
        kwargs = dict(kwargs)
        # verbose=True sends the compiler's output to the console instead of the exception, which then says
        # only "Error building extension": the first compiler error could not be shown
        kwargs["verbose"] = False
        if args:  # positional use beyond the sources: leave the call exactly as written
            return self.original(name, cpp_sources, cuda_sources, *args, **kwargs)
        if self.split_root is not None:
            module = self._split(name, cpp_sources, cuda_sources, kwargs)
            if module is not None:
                return module
        self._add_pch(name, cuda_sources, kwargs)
        light = lighten_cuda_sources(cuda_sources)
        if light is None:
            return self.original(name, cpp_sources, cuda_sources, **kwargs)
        try:
            module = self.original(name, cpp_sources, light, **kwargs)
            self.notes.append("CUDA sources built with torch/types.h in place of torch/extension.h")
            return module
        except Exception as e:
            if not missing_declaration(str(e)):
                raise
            self.notes.append("CUDA sources needed torch/extension.h after all: rebuilt as written")
            return self.original(name, cpp_sources, cuda_sources, **kwargs)

    def _split(self, name, cpp_sources, cuda_sources, kwargs):
        from kforge_core.evaluation.building.split_build import SplitBuilder, SplitFailed

        other = set(kwargs) - SPLIT_ARGS - SPLIT_IGNORES
        if other:
            self.notes.append(f"split build not used: load_inline called with {', '.join(sorted(other))}")
            return None
        builder = SplitBuilder(self.split_root, self.notes)
        try:
            return builder.build(name, cpp_sources, cuda_sources, **{k: v for k, v in kwargs.items() if k in SPLIT_ARGS})
        except SplitFailed as e:
            self.notes.append(f"split build not used: {str(e)[:1500]}")
        except Exception as e:  # the fast path must never cost the candidate its verdict
            self.notes.append(f"split build not used: {type(e).__name__}: {str(e)[:600]}")
        finally:
            self.split_seconds = builder.seconds
        return None

    def _add_pch(self, name, cuda_sources, kwargs) -> None:
        if self.pch_root is None or kwargs.get("no_implicit_headers") or kwargs.get("use_pch"):
            return
        try:
            from torch.utils.cpp_extension import get_cxx_compiler

            cxx = get_cxx_compiler()
            extra = list(kwargs.get("extra_cflags") or [])
            with_cuda = kwargs.get("with_cuda")
            flags = main_cpp_flags(name, extra, list(kwargs.get("extra_include_paths") or []),
                                   bool(cuda_sources) if with_cuda is None else bool(with_cuda))
            if flags is None:
                return
            header, ready = pch_header(self.pch_root, cxx, flags)
        except Exception:
            return
        if not ready:
            job = start_pch_build(header, cxx, flags)
            if job:
                self.pch_jobs.append(job)
        # Without the .gch (yet) the header is an ordinary #include <torch/extension.h>: same program.
        kwargs["extra_cflags"] = extra + ["-include", str(header)]
        if ready:
            self.notes.append("main.cpp used the precompiled torch/extension.h")

    def wait(self, timeout_s: float) -> None:
        """Let a PCH started by this build finish, so later builds find it (the sandbox kills leftovers)."""
        for job in self.pch_jobs:
            try:
                job.wait(timeout=max(timeout_s, 1))
            except subprocess.TimeoutExpired:
                job.kill()


def install(pch_root: Path | None, notes: list[str], split_root: Path | None = None) -> FastLoadInline | None:
    try:
        from torch.utils import cpp_extension
    except Exception:
        return None
    fast = FastLoadInline(cpp_extension.load_inline, pch_root, notes, split_root)
    cpp_extension.load_inline = fast
    return fast
