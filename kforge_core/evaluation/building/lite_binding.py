"""The thin binding of a split build (split_build.py): instead of pybind11 (seconds of template instantiation
per build), each bound function gets a C entry point, and Python calls it through ctypes, passing tensors as
the owned handles of PyTorch's stable C shim (torch._C._aoti makes and takes them).

Types the binding knows: torch::Tensor (by value or const reference), integers, floating point and bool
parameters; those, void, or std::vector<torch::Tensor> (a list, as pybind11 gives) as the result. Anything else
(optionals, tuples, vector parameters) raises Unsplittable and the source is built by load_inline as written.
"""

from __future__ import annotations

import ctypes
import operator
import re
import types

from kforge_core.evaluation.building.cuda_split import Unsplittable, _code, _top_level_commas

TENSOR = re.compile(r"^(const\s+)?(torch::|at::)?Tensor\s*&?$")
INT = re.compile(r"^(const\s+)?(unsigned\s+|signed\s+)?(int|long|long\s+long|int64_t|int32_t|size_t|uint32_t|"
                 r"uint64_t|std::int64_t|std::int32_t|std::size_t|unsigned)\s*&?$")
FLOAT = re.compile(r"^(const\s+)?(float|double)\s*&?$")
BOOL = re.compile(r"^(const\s+)?bool\s*&?$")
TENSORS = re.compile(r"^(std::)?vector\s*<\s*(torch::|at::)?Tensor\s*>$")
MAX_TENSORS = 256  # results of one call returning a vector


def kind(type_text: str) -> str:
    t = " ".join(type_text.split())
    for name, rx in (("tensor", TENSOR), ("int", INT), ("float", FLOAT), ("bool", BOOL)):
        if rx.match(t):
            return name
    if t == "void":
        return "void"
    if TENSORS.match(t):
        return "tensors"
    raise Unsplittable(f"a bound function uses type {t!r} (the thin binding knows tensors, numbers and bool)")


def signatures(cpp_sources: str, functions: dict) -> dict[str, tuple[str, list[str]]]:
    """{function: (result kind, parameter kinds)} from the declarations in cpp_sources."""
    code = _code(cpp_sources)
    sigs = {}
    for fn in functions:
        found = [m for m in re.finditer(rf"(?<![\w:.]){re.escape(fn)}\s*\(([^)]*)\)\s*[;{{]", code)]
        if len(found) != 1:
            raise Unsplittable(f"{'no' if not found else 'more than one'} declaration of {fn} in cpp_sources")
        # the return type: what stands before the name since the previous statement or block (it may hold
        # commas, std::tuple<a, b>, and sit on the line above)
        before = re.split(r"[;{}]", code[:found[0].start()])[-1]
        ret = " ".join(l for l in before.splitlines() if not l.strip().startswith("#")).strip()
        params = found[0].group(1).strip()
        ret = re.sub(r"^(static|inline|extern)\s+", "", ret)
        kinds = []
        if params and params != "void":
            for p in _top_level_commas(params):
                decl = p.split("=")[0].strip()
                m = re.match(r"(.*?)([A-Za-z_]\w*)?$", decl)
                t = m.group(1) if m.group(2) and m.group(1).strip() else decl
                k = kind(t)
                if k == "tensors":  # a result only: a list of tensors coming in is not converted
                    raise Unsplittable(f"a bound function takes {' '.join(t.split())!r} (a std::vector parameter)")
                kinds.append(k)
        sigs[fn] = (kind(ret), kinds)
    return sigs


C_TYPE = {"tensor": "void*", "int": "int64_t", "float": "double", "bool": "bool"}
RESULT_C_TYPE = {"tensor": "void*", "int": "int64_t", "float": "double", "bool": "bool", "void": "int",
                 "tensors": "int64_t"}


def c_entries(sigs: dict) -> str:
    """extern "C" entry points: arguments converted as the C++ call converts them; an exception sets this
    thread's error message (kforge_failed / kforge_last_error), read by Python only when there is one."""
    out = ["#include <exception>", "#include <stdexcept>", "#include <string>", "#include <vector>",
           "static thread_local std::string kforge_error;", "static thread_local bool kforge_error_set = false;",
           'extern "C" const char* kforge_last_error() { kforge_error_set = false; return kforge_error.c_str(); }',
           'extern "C" bool kforge_failed() { return kforge_error_set; }']
    for fn, (ret, kinds) in sigs.items():
        params = ", ".join([f"{C_TYPE[k]} a{i}" for i, k in enumerate(kinds)] +
                           (["void** kforge_out"] if ret == "tensors" else []))
        args = ", ".join(f"torch::Tensor::steal(static_cast<AtenTensorHandle>(a{i}))" if k == "tensor" else f"a{i}"
                         for i, k in enumerate(kinds))
        call = f"{fn}({args})"
        body = {"void": f"{call}; return 0;", "tensor": f"return {call}.release();",
                # a vector: each handle into the caller's array (MAX_TENSORS long), the count as the result
                "tensors": f"auto kforge_v = {call}; if (kforge_v.size() > {MAX_TENSORS}) throw std::runtime_error("
                           f'"more than {MAX_TENSORS} tensors returned"); for (size_t i = 0; i < kforge_v.size(); ++i) '
                           "kforge_out[i] = kforge_v[i].release(); return (int64_t)kforge_v.size();"
                }.get(ret, f"return {call};")
        out.append(f'extern "C" {RESULT_C_TYPE[ret]} kforge_entry_{fn}({params}) {{\n'
                   f"  try {{ {body} }}\n"
                   f"  catch (const std::exception& e) {{ kforge_error = e.what(); }}\n"
                   f'  catch (...) {{ kforge_error = "an unknown C++ exception"; }}\n'
                   f"  kforge_error_set = true;\n  return {{}};\n}}")
    return "\n".join(out) + "\n"


# torch._C._aoti passes handles as PyCapsules (pybind11's void*)
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype, _capsule_new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

CT = {"tensor": ctypes.c_void_p, "int": ctypes.c_int64, "float": ctypes.c_double, "bool": ctypes.c_bool}


def _convert(fn: str, i: int, k: str, value):
    import torch

    if k == "tensor":
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{fn}(): argument {i} must be a Tensor, not {type(value).__name__}")
        return _capsule_pointer(torch._C._aoti.unsafe_alloc_void_ptr_from_tensor(value), None)
    if k == "int":
        if isinstance(value, float):
            raise TypeError(f"{fn}(): argument {i} must be an int, not float")
        return operator.index(value)
    if k == "float":
        return float(value)
    return bool(value)  # pybind11 converts anything with a truth value (and None) for a bool parameter


def module(name: str, so_path: str, sigs: dict) -> types.ModuleType:
    """A module whose functions call the library's entry points, as load_inline's module would."""
    import torch

    lib = ctypes.CDLL(so_path)
    mod = types.ModuleType(name, f"KForge split build of {name} ({so_path})")
    mod.__file__ = so_path
    mod._kforge_library = lib
    # the plural form takes the handle over (the singular one copies the tensor and leaks the handle, and with
    # it every result's memory)
    take = torch._C._aoti.alloc_tensors_by_stealing_from_void_ptrs

    def steal(pointer: int):
        return take([_capsule_new(pointer, None, None)])[0]

    failed, last_error = lib.kforge_failed, lib.kforge_last_error
    failed.restype, failed.argtypes = ctypes.c_bool, []
    last_error.restype, last_error.argtypes = ctypes.c_char_p, []

    def make(fn: str, ret: str, kinds: list[str]):
        entry = getattr(lib, f"kforge_entry_{fn}")
        entry.restype = {"void": ctypes.c_int, "tensor": ctypes.c_void_p, "tensors": ctypes.c_int64}.get(ret) or CT[ret]
        entry.argtypes = [CT[k] for k in kinds] + ([ctypes.POINTER(ctypes.c_void_p)] if ret == "tensors" else [])

        def call(*args):
            if len(args) != len(kinds):
                raise TypeError(f"{fn}(): takes {len(kinds)} arguments ({len(args)} given)")
            converted = []
            try:
                for i, (k, a) in enumerate(zip(kinds, args)):
                    converted.append(_convert(fn, i, k, a))
            except Exception:
                for k, h in zip(kinds, converted):  # give back the handles already made
                    if k == "tensor":
                        steal(h)
                raise
            out = (ctypes.c_void_p * MAX_TENSORS)() if ret == "tensors" else None
            result = entry(*converted, *([out] if out is not None else []))
            if failed():
                raise RuntimeError(last_error().decode(errors="replace"))
            if ret == "tensors":
                return [steal(out[i]) if out[i] else None for i in range(result)]
            if ret == "void":
                return None
            if ret == "tensor":
                return steal(result) if result else None  # an undefined tensor: None, as pybind11 gives
            return result

        call.__name__ = call.__qualname__ = fn
        return call

    for fn, (ret, kinds) in sigs.items():
        setattr(mod, fn, make(fn, ret, kinds))
    return mod
