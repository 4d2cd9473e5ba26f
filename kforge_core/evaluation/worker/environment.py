"""What machine an evaluation ran on: torch, Python, CPU, and for CUDA the GPU, driver and clocks."""

from __future__ import annotations

import os
from pathlib import Path


def environment(device: str) -> dict:
    import platform

    import torch

    env = {"torch": torch.__version__, "python": platform.python_version(), "platform": platform.platform(),
           "device": device, "threads": torch.get_num_threads(),
           "spare_worker": os.environ.get("KFORGE_SPARE_WORKER") == "1"}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                env["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        env["cpu"] = platform.processor()
    if device == "cuda":
        env.update(gpu_environment())
    return env


def gpu_environment() -> dict:
    """GPU name, capability, CUDA versions, and driver / clocks where nvidia-smi can read them."""
    import subprocess

    import torch

    p = torch.cuda.get_device_properties(0)
    env = {"gpu": p.name, "capability": "%d.%d" % (p.major, p.minor), "sm_count": p.multi_processor_count,
           "cuda_runtime": torch.version.cuda, "triton": _version("triton")}
    fields = "driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit"
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=20).stdout.splitlines()
        if out:
            for k, v in zip(fields.split(","), out[0].split(",")):
                env[k.replace(".", "_")] = v.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return env


def _version(module: str) -> str | None:
    try:
        return __import__(module).__version__
    except Exception:
        return None
