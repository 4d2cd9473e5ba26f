"""Second-scale builds of load_inline extensions (issue 15).

A cold load_inline build spends ~97 % of its time in torch's C++ headers: parsed twice by nvcc (device and host
pass of cuda.cu), once more by g++ (main.cpp), and even with a precompiled header g++ still instantiates their
templates in every file (15 s for an empty file on the 2-core dev machine). Here no compiler sees those headers:

* device.o: the kernels and their helpers (cuda_split.py), by nvcc with the flags load_inline would use;
* host.o: the CUDA source's host code (the torch::Tensor wrappers, launches rewritten to launchers), and
* main.o: cpp_sources plus a C entry point per bound function (lite_binding.py),
  both by the C++ compiler against torch_lite/kforge_torch_lite.h, which implements the part of the torch::Tensor
  API wrappers use on PyTorch's stable C shim (the same ATen functions underneath);

compiled at once, each cached by its own text and command (a source changing only host code reuses device.o),
linked with torch's libraries, and loaded through ctypes as a module with the bound functions. Whatever this
path cannot take (cuda_split.Unsplittable, an API torch-lite lacks, any build failure) goes back to load_inline
as written (fast_build.FastLoadInline), with the reason in the build notes.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from kforge_core.evaluation.building import cuda_split
from kforge_core.evaluation.building import lite_binding

LITE_HEADER = Path(__file__).parent / "torch_lite" / "kforge_torch_lite.h"
# torch headers torch-lite stands in for; a source including any other torch header is built as written
LITE_COVERS = ("torch/extension.h", "torch/types.h", "torch/torch.h", "torch/all.h", "ATen/ATen.h",
               "ATen/cuda/CUDAContext.h", "c10/cuda/CUDAGuard.h", "c10/cuda/CUDAException.h",
               "ATen/cuda/Exceptions.h", "c10/cuda/CUDAStream.h")
TORCH_INCLUDE_LINE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]((?:torch|ATen|c10|pybind11|THC)/[^>"]+)[>"][^\n]*$', re.M)
# nvcc's -D/-U flags reach the host pass of cuda.cu too (e.g. __CUDA_NO_HALF_OPERATORS__): host.o gets them
HOST_FLAG_FROM_NVCC = ("-D", "-U")


# what each torch CUDA header declares, so that torch-lite offers no more than the source included
LITE_FEATURES = {"KFORGE_LITE_CUDA_CONTEXT": ("ATen/cuda/CUDAContext.h", "c10/cuda/CUDAStream.h"),
                 "KFORGE_LITE_CUDA_GUARD": ("c10/cuda/CUDAGuard.h",),
                 "KFORGE_LITE_CUDA_EXCEPTION": ("ATen/cuda/CUDAContext.h", "c10/cuda/CUDAException.h",
                                                "ATen/cuda/Exceptions.h")}


def lite_prelude(text: str, cuda_unit: bool) -> str:
    """torch-lite for one translation unit: the CUDA runtime where load_inline's file has it (cuda.cu, or a
    torch CUDA header that brings it), and each CUDA helper only if its torch header is included."""
    included = set(m.group(1) for m in TORCH_INCLUDE_LINE.finditer(text))
    features = [f for f, headers in LITE_FEATURES.items() if included & set(headers)]
    lines = [f"#define {f}" for f in features]
    if cuda_unit or features:
        lines.insert(0, "#define KFORGE_LITE_CUDA")
    return "".join(l + "\n" for l in lines) + f'#include "{LITE_HEADER}"\n'


def without_torch_includes(text: str) -> str:
    """The text with the torch includes torch-lite covers blanked (same line count)."""
    def swap(m):
        if m.group(1) not in LITE_COVERS:
            raise cuda_split.Unsplittable(f"#include <{m.group(1)}> (torch-lite covers {', '.join(LITE_COVERS[:3])}, ...)")
        return ""
    return TORCH_INCLUDE_LINE.sub(swap, text)


# What torch's headers bring into a load_inline CUDA file without the author asking (FLT_MAX, INT_MAX, fabsf ...),
# and, for host code, what nvcc's own headers declare at global scope: the host-side min/max of
# crt/math_functions, which LLM-written launch code calls unqualified ("min(blocks, 1024)").
STANDARD_HEADERS = "#include <cfloat>\n#include <climits>\n#include <cstdint>\n#include <cmath>\n#include <algorithm>\n"
HOST_AS_NVCC_SEES_IT = STANDARD_HEADERS + (
    "template <class A, class B> inline typename std::common_type<A, B>::type min(A a, B b) { return b < a ? b : a; }\n"
    "template <class A, class B> inline typename std::common_type<A, B>::type max(A a, B b) { return a < b ? b : a; }\n")


class SplitFailed(Exception):
    """This path could not build the source; the reason goes to the build notes."""


@dataclass
class Toolchain:
    cxx: str
    nvcc: str
    cflags: list[str]  # main.cpp's, as load_inline would pass them (no TORCH_EXTENSION_NAME)
    cuda_cflags: list[str]  # cuda.cu's
    ldflags: list[str]

    @property
    def host_cflags(self) -> list[str]:
        return self.cflags + [f for f in self.cuda_cflags if f.startswith(HOST_FLAG_FROM_NVCC)
                              and not f.startswith("-DTORCH_") and f not in self.cflags]


def toolchain(name: str, extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths,
              with_cuda: bool = True) -> Toolchain:
    """The commands load_inline would run, read from the ninja file torch writes for them."""
    from torch.utils import cpp_extension as ce

    # Models write extra_ldflags=['']: a ninja file drops an empty token, a command line
    # passes it on ("g++: error: : No such file"), so the lists are cleaned as ninja would see them.
    extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths = (
        clean_flags(f) for f in (extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths))

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "build.ninja")
        _call_by_name(ce._write_ninja_file_to_build_library, path=path, name=name,
                      sources=[os.path.join(d, "main.cpp"), *([os.path.join(d, "cuda.cu")] if with_cuda else [])],
                      extra_cflags=list(extra_cflags or []), extra_cuda_cflags=list(extra_cuda_cflags or []),
                      extra_sycl_cflags=[], extra_ldflags=[], extra_include_paths=list(extra_include_paths or []),
                      with_cuda=with_cuda, with_sycl=False, is_standalone=False)
        lines = dict(l.split(" = ", 1) for l in Path(path).read_text().splitlines() if " = " in l)

    def flags(key: str) -> list[str]:
        return [f for f in shlex.split(lines.get(key, "")) if not f.startswith("-DTORCH_EXTENSION_NAME=")]

    ldflags = _call_by_name(ce._prepare_ldflags, extra_ldflags=list(extra_ldflags or []), with_cuda=with_cuda,
                            with_sycl=False, verbose=False, is_standalone=False)
    return Toolchain(lines["cxx"].strip(), lines.get("nvcc", "nvcc").strip(), flags("cflags") + flags("post_cflags"),
                     flags("cuda_cflags") + flags("cuda_post_cflags"), ["-shared", *ldflags])


def clean_flags(flags) -> list[str]:
    """A flag list as a build command should get it: a lone string as one flag, no empty entries (repeats stay:
    ["-gencode", "arch=A", "-gencode", "arch=B"] needs both)."""
    if isinstance(flags, str):
        flags = [flags]
    return [str(f).strip() for f in flags or [] if str(f).strip()]


BUILD_ARGS = ("name", "cpp_sources", "cuda_sources", "functions", "extra_cflags", "extra_cuda_cflags",
              "extra_ldflags", "extra_include_paths", "with_cuda")


def build_arguments(call: dict) -> dict:
    """The keyword arguments of a recorded load_inline call that SplitBuilder.build takes."""
    return {k: call[k] for k in BUILD_ARGS if k in call}


def _call_by_name(fn, **kwargs):
    """A private torch function called with the arguments its version takes (they change between releases)."""
    import inspect

    params = inspect.signature(fn).parameters
    return fn(**{k: v for k, v in kwargs.items() if k in params})


def _digest(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:24]


class SplitBuilder:
    """Builds one load_inline call by the split path into root (objects and libraries cached by content)."""

    def __init__(self, root: Path, notes: list[str]):
        self.root, self.notes = Path(root), notes
        self.seconds: dict[str, float] = {}

    def build(self, name: str, cpp_sources, cuda_sources=None, functions=None, extra_cflags=None,
              extra_cuda_cflags=None, extra_ldflags=None, extra_include_paths=None, with_cuda=None):
        """The module, or SplitFailed with the reason this path does not apply."""
        cpp = "\n".join([cpp_sources] if isinstance(cpp_sources, str) else list(cpp_sources or []))
        cuda_parts = [cuda_sources] if isinstance(cuda_sources, str) else list(cuda_sources or [])
        cuda = "\n".join(cuda_parts)
        if functions is None:
            raise SplitFailed("no functions= list (the source writes its own bindings)")
        if isinstance(functions, str):
            functions = [functions]
        functions = dict(functions) if isinstance(functions, dict) else {f: f for f in functions}
        try:
            sigs = lite_binding.signatures(cpp, functions)
            main_text = without_torch_includes(cpp)
            parts = cuda_split.split(without_torch_includes(cuda)) if cuda else None
        except cuda_split.Unsplittable as e:
            raise SplitFailed(str(e)) from None
        gpu = bool(cuda) if with_cuda is None else bool(with_cuda)
        tc = toolchain(name, extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths, gpu)
        units = {"main": ("main.cpp", lite_prelude(cpp, False) + '#line 1 "main.cpp"\n' + main_text + "\n"
                          + lite_binding.c_entries(sigs), [tc.cxx, *tc.cflags])}
        if parts:
            units["host"] = ("cuda_host.cpp", lite_prelude(cuda, True) + "#include <cuda.h>\n#include <cuda_runtime.h>\n"
                             + HOST_AS_NVCC_SEES_IT + '#line 1 "cuda.cu"\n' + parts.host, [tc.cxx, *tc.host_cflags])
            units["device"] = ("cuda_device.cu", "#include <cuda.h>\n#include <cuda_runtime.h>\n" + STANDARD_HEADERS
                               + '#line 1 "cuda.cu"\n' + parts.device, [tc.nvcc, *tc.cuda_cflags])
        objects = self._compile_all(units)
        link = [tc.cxx, *[str(o) for o in objects.values()], *tc.ldflags]
        so_dir = self.root / "lib" / _digest(name, link)
        so = so_dir / f"{name}.so"
        if not so.exists():
            so_dir.mkdir(parents=True, exist_ok=True)
            tmp = so_dir / f".{name}.{os.getpid()}.so"
            t0 = time.monotonic()
            p = subprocess.run([*link, "-o", str(tmp)], capture_output=True, text=True)
            self.seconds["link"] = round(time.monotonic() - t0, 3)
            if p.returncode:
                raise SplitFailed("link failed: " + (p.stderr or p.stdout).strip()[-600:])
            os.replace(tmp, so)
        try:
            module = lite_binding.module(name, str(so), sigs)
        except (OSError, AttributeError) as e:
            raise SplitFailed(f"the library did not load: {e}") from None
        kernels = f"{len(parts.kernels)} kernel(s) by nvcc without torch headers, " if parts else ""
        self.notes.append(f"split build: {kernels}host code against torch-lite, thin binding ({self._summary()})")
        return module

    def _compile_all(self, units: dict) -> dict[str, Path]:
        obj_dir = self.root / "obj"
        obj_dir.mkdir(parents=True, exist_ok=True)
        src_dir = Path(tempfile.mkdtemp(prefix="split-", dir=self.root))
        objects = {key: obj_dir / f"{key}-{_digest(text, cmd)}.o" for key, (_, text, cmd) in units.items()}

        def compile_one(key: str) -> str | None:
            fname, text, cmd = units[key]
            if objects[key].exists():
                self.seconds[key] = 0.0  # cached
                return None
            (src_dir / fname).write_text(text)
            tmp = obj_dir / f".{objects[key].name}.{os.getpid()}"
            t0 = time.monotonic()
            p = subprocess.run([*cmd, "-c", str(src_dir / fname), "-o", str(tmp)], capture_output=True, text=True)
            self.seconds[key] = round(time.monotonic() - t0, 3)
            if p.returncode:
                text = (p.stderr + p.stdout).strip()
                first = next((l for l in text.splitlines() if "error" in l), text[-300:])
                return f"{fname}: {first.strip()[:400]}"
            os.replace(tmp, objects[key])
            return None

        with ThreadPoolExecutor(len(units)) as pool:
            errors = [e for e in pool.map(compile_one, units) if e]
        if errors:
            raise SplitFailed("the split source did not compile: " + "\n".join(errors))
        return objects

    def _summary(self) -> str:
        return ", ".join(f"{k} {'cached' if v == 0 else f'{v:.1f} s'}" for k, v in self.seconds.items())
