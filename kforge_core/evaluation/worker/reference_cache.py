"""torch.compile timings of a problem's reference, kept per (problem source, device, torch version, timing
protocol): compiling the reference costs seconds to minutes per evaluation and its result does not depend
on the candidate. Eager is still timed beside every candidate; the drift of eager between then and now is
reported next to a reused compiled timing."""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from pathlib import Path


def key(problem_source: str, device: str, settings: dict) -> str:
    import torch

    protocol = {k: settings.get(k) for k in ("warmup", "min_reps", "max_reps", "min_timing_s", "threads", "seed")}
    blob = json.dumps([problem_source, device, torch.__version__, protocol], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def device_name(device_type: str) -> str:
    import platform

    import torch

    if device_type == "cuda":
        return torch.cuda.get_device_name()
    return f"{platform.processor() or platform.machine()} x{torch.get_num_threads()}"


def load(cache_dir: Path, k: str) -> dict | None:
    try:
        return json.loads((cache_dir / "reference_timings" / f"{k}.json").read_text())
    except (OSError, ValueError):
        return None


def save(cache_dir: Path, k: str, compiled: dict, eager: dict) -> None:
    d = cache_dir / "reference_timings"
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / f".{k}.{uuid.uuid4().hex[:6]}"
    tmp.write_text(json.dumps({"compiled": compiled, "eager": eager, "measured_at": time.time()}))
    os.replace(tmp, d / f"{k}.json")


def copy_bandwidth(cache_dir: Path, measure) -> float:
    """The device's copy bandwidth (a property of the card, not of the problem): measured once per device
    and torch version, then read back, so later evaluations do not allocate the probe's 512 MiB."""
    import torch

    name = hashlib.sha256(f"{device_name('cuda')}|{torch.__version__}".encode()).hexdigest()[:16]
    path = cache_dir / "device_bandwidth" / f"{name}.json"
    try:
        return float(json.loads(path.read_text())["bytes_per_s"])
    except (OSError, ValueError, KeyError):
        pass
    bw = measure()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{name}.{uuid.uuid4().hex[:6]}"
    tmp.write_text(json.dumps({"bytes_per_s": bw, "device": device_name("cuda"), "measured_at": time.time()}))
    os.replace(tmp, path)
    return bw
