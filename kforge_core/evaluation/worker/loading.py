"""Loading and preparing what an evaluation runs: source modules, seeded calls, device moves, clones, and
readable exception descriptions. Used by the evaluation stages, the profiler targets and the benchmarks."""

from __future__ import annotations

import errno
import sys
import traceback
from pathlib import Path


def describe_exception(e: BaseException, filename: str) -> str:
    """'Type: message (candidate.py:12 in forward)', locating the deepest frame in `filename`."""
    msg = str(e).strip()
    if len(msg) > 1500:
        msg = msg[:1500] + " ..."
    where = ""
    for frame in reversed(traceback.extract_tb(e.__traceback__)):
        if frame.filename == filename:
            where = f" ({Path(filename).name}:{frame.lineno} in {frame.name})"
            break
    if isinstance(e, OSError) and e.errno == errno.EFBIG:
        where += " [the worker's output limit was reached: a stdout flood or a runaway file]"
    return f"{type(e).__name__}: {msg}{where}"


def load_source_module(source: str, filename: str, module_name: str, register: bool = True):
    import types

    mod = types.ModuleType(module_name)
    mod.__file__ = filename
    if register:
        sys.modules[module_name] = mod
    exec(compile(source, filename, "exec"), mod.__dict__)
    return mod


def seeded(seed: int, fn):
    """fn() under torch.manual_seed(seed): the problem's inputs and weights, reproducibly."""
    import torch

    torch.manual_seed(seed)
    return fn()


def to_device(obj, device):
    import torch

    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_device(o, device) for o in obj)
    return obj


def clone(obj):
    import torch

    if isinstance(obj, torch.Tensor):
        return obj.clone()
    if isinstance(obj, (list, tuple)):
        return type(obj)(clone(o) for o in obj)
    return obj
