"""Nsight Compute: profile a correct candidate's kernels and reduce ncu's CSV to a compact ProfileReport.

Only kernels launched inside the target's NVTX range are profiled (the candidate's forward pass, after
warm-up), with a bounded kernel count and a wall-clock limit. A missing ncu or missing counter
permissions give a clear message and a fallback (the evaluator timings), never a failure.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from kforge_core import REPO_ROOT
from kforge_core.backends import get_backend
from kforge_core.evaluation.evaluator import worker_env
from kforge_core.evaluation.settings import EvalSettings
from kforge_core.problems import Problem
from kforge_core.profile import Metric, ProfileReport
from profiler_adapters.ncu_target import RANGE

SECTIONS = ("SpeedOfLight", "Occupancy", "LaunchStats", "MemoryWorkloadAnalysis", "WarpStateStats",
            "ComputeWorkloadAnalysis", "SchedulerStats")
STALL_REASONS = ("long_scoreboard", "short_scoreboard", "mio_throttle", "lg_throttle", "wait", "barrier",
                 "math_pipe_throttle", "not_selected", "dispatch_stall", "drain", "membar", "no_instruction",
                 "sleeping", "tex_throttle", "branch_resolving", "imc_miss", "misc")
EXTRA_METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum", "sm__inst_executed_pipe_tensor.sum",
                 *(f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in STALL_REASONS))

# (report label, ncu metric name as printed on the details page)
KEY_METRICS = (
    ("duration", "Duration"),
    ("SM throughput (% of peak)", "Compute (SM) Throughput"),
    ("memory throughput (% of peak)", "Memory Throughput"),
    ("DRAM throughput (% of peak)", "DRAM Throughput"),
    ("achieved occupancy", "Achieved Occupancy"),
    ("theoretical occupancy", "Theoretical Occupancy"),
    ("registers per thread", "Registers Per Thread"),
    ("static shared memory per block", "Static Shared Memory Per Block"),
    ("dynamic shared memory per block", "Dynamic Shared Memory Per Block"),
    ("block size", "Block Size"),
    ("grid size", "Grid Size"),
    ("L1/TEX hit rate", "L1/TEX Hit Rate"),
    ("L2 hit rate", "L2 Hit Rate"),
    ("warp cycles per issued instruction", "Warp Cycles Per Issued Instruction"),
    ("executed IPC", "Executed Ipc Active"),
)
LIMITERS = ("Block Limit Registers", "Block Limit Shared Mem", "Block Limit Warps", "Block Limit SM")


class NcuUnavailable(Exception):
    pass


@dataclass
class KernelProfile:
    name: str
    metrics: dict[str, tuple[str, str]] = field(default_factory=dict)  # metric -> (value, unit)
    rules: list[str] = field(default_factory=list)


def ncu_path() -> str | None:
    return shutil.which("ncu") or next((str(p) for p in Path("/usr/local/cuda/bin").glob("ncu")), None)


def _num(v: str) -> float | None:
    try:
        return float(v.replace(",", ""))
    except (ValueError, AttributeError):
        return None


def parse_details_csv(text: str) -> list[KernelProfile]:
    """Rows of `ncu --csv --page details` (one row per kernel x metric, rule rows included) -> kernels."""
    lines = [l for l in text.splitlines() if l.startswith('"')]  # drop ==PROF== chatter
    kernels: dict[str, KernelProfile] = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        kid = row.get("ID", "0")
        k = kernels.setdefault(kid, KernelProfile(row.get("Kernel Name", "?")))
        name, value = row.get("Metric Name", ""), row.get("Metric Value", "")
        if name:
            k.metrics.setdefault(name, (value, row.get("Metric Unit", "")))
        rule_type, rule_text = (row.get("Rule Type") or "").strip(), (row.get("Rule Description") or "").strip()
        if rule_type and rule_text:
            speedup = (row.get("Estimated Speedup") or "").strip()
            entry = f"{rule_type} {row.get('Rule Name', '').strip()}: {rule_text}"
            if speedup:
                entry += f" (estimated speedup {speedup}%)"
            if entry not in k.rules:
                k.rules.append(entry)
    return list(kernels.values())


def time_us(k: KernelProfile, metric: str = "Duration") -> float:
    """A time metric of a kernel in µs, whatever unit ncu printed it in."""
    v, unit = k.metrics.get(metric, ("0", ""))
    x = _num(v) or 0.0
    return x * {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}.get(unit, 1.0)


def report_from_kernels(kernels: list[KernelProfile]) -> ProfileReport:
    if not kernels:
        return ProfileReport("ncu", notes=["ncu profiled no kernel inside the candidate's forward pass"])
    kernels = sorted(kernels, key=time_us, reverse=True)
    total = sum(time_us(k) for k in kernels) or 1.0
    top = kernels[0]
    metrics = [Metric("kernels profiled", str(len(kernels))), Metric("total kernel time", total, "us")]
    for label, name in KEY_METRICS:
        if name in top.metrics:
            v, unit = top.metrics[name]
            num = _num(v)
            metrics.append(Metric(f"{label}", num if num is not None else v, unit))
    limits = {n: _num(top.metrics[n][0]) for n in LIMITERS if n in top.metrics}
    if limits:
        limiter = min((v, n) for n, v in limits.items() if v is not None)[1]
        metrics.append(Metric("occupancy limiter", limiter.replace("Block Limit ", ""), "",
                              ", ".join(f"{n.replace('Block Limit ', '')}={v:g}" for n, v in limits.items())))
    read, write = (_num(top.metrics.get(m, ("", ""))[0]) for m in ("dram__bytes_read.sum", "dram__bytes_write.sum"))
    if read is not None and write is not None:
        metrics.append(Metric("DRAM bytes (read + write)", read + write, top.metrics["dram__bytes_read.sum"][1]))
    stalls = []
    for r in STALL_REASONS:
        m = f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio"
        if m in top.metrics and _num(top.metrics[m][0]) is not None:
            stalls.append((_num(top.metrics[m][0]), r))
    for value, reason in sorted(stalls, reverse=True)[:3]:
        metrics.append(Metric(f"warp stall: {reason}", value, "cycles per issued instruction"))
    if "sm__inst_executed_pipe_tensor.sum" in top.metrics:
        n_tensor = _num(top.metrics["sm__inst_executed_pipe_tensor.sum"][0])
        metrics.append(Metric("tensor-core instructions executed", n_tensor if n_tensor is not None else "?", "",
                              "tensor cores unused" if n_tensor == 0 else ""))
    rows = [{"kernel": k.name[:80], "time_us": round(time_us(k), 2),
             "share": f"{time_us(k) / total:.0%}",
             "sm_pct": top_metric(k, "Compute (SM) Throughput"), "mem_pct": top_metric(k, "Memory Throughput")}
            for k in kernels]
    findings = list(dict.fromkeys(r for k in kernels for r in k.rules))
    return ProfileReport("ncu", metrics=metrics, findings=findings, kernels=rows,
                         notes=[f"metrics are for the longest kernel, {top.name[:80]}"] if len(kernels) > 1 else [])


def top_metric(k: KernelProfile, name: str):
    v = k.metrics.get(name, ("", ""))[0]
    n = _num(v)
    return n if n is not None else v


def profile(problem: Problem, candidate_source: str, backend: str = "cuda", out_dir: Path | None = None,
            timeout_s: float = 300.0, max_kernels: int = 20, extra_metrics: tuple[str, ...] = EXTRA_METRICS,
            settings: EvalSettings | None = None, clock_control: str = "base") -> tuple[ProfileReport, str]:
    """Run ncu on the candidate; return (report, raw CSV). Raises NcuUnavailable with a clear reason.

    clock_control "base" (ncu's default) locks clocks for repeatable counters; "none" leaves them free,
    which is how the evaluator times kernels."""
    ncu = ncu_path()
    if not ncu:
        raise NcuUnavailable("Nsight Compute (ncu) is not installed or not on PATH")
    b = get_backend(backend)
    settings = settings or EvalSettings()
    jobdir = Path(tempfile.mkdtemp(prefix="kforge-ncu-"))
    try:
        (jobdir / "candidate.py").write_text(candidate_source)
        (jobdir / "job.json").write_text(json.dumps({"problem": problem.to_dict(), "backend": b.name,
                                                     "settings": settings.to_dict()}))
        env = {**os.environ, **worker_env(b, settings, candidate_source),
               "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
        rep = jobdir / "profile"
        cmd = [ncu, "--nvtx", "--nvtx-include", f"{RANGE}/", "--launch-count", str(max_kernels), "--target-processes",
               "all", "--clock-control", clock_control, "--export", str(rep), "--force-overwrite"]
        for s in SECTIONS:
            cmd += ["--section", s]
        if extra_metrics:
            cmd += ["--metrics", ",".join(extra_metrics)]
        cmd += [sys.executable, "-m", "profiler_adapters.ncu_target", str(jobdir)]
        try:
            p = subprocess.run(cmd, env=env, cwd=jobdir, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise NcuUnavailable(f"ncu did not finish within {timeout_s:g} s") from None
        log = p.stdout + p.stderr
        if "ERR_NVGPUCTRPERM" in log or "permission" in log.lower() and "counter" in log.lower():
            raise NcuUnavailable("ncu may not read the GPU's performance counters here (ERR_NVGPUCTRPERM): "
                                 "run as root or enable NVreg_RestrictProfilingToAdminUsers=0")
        if not Path(f"{rep}.ncu-rep").exists() and extra_metrics and "metric" in log.lower():
            # a metric this GPU or ncu version does not know: profile with the sections alone
            return profile(problem, candidate_source, backend, out_dir, timeout_s, max_kernels, (), settings,
                           clock_control)
        if not Path(f"{rep}.ncu-rep").exists():
            raise NcuUnavailable(f"ncu produced no report (exit {p.returncode}): {log.strip()[-800:]}")
        q = subprocess.run([ncu, "--import", f"{rep}.ncu-rep", "--csv", "--page", "details", "--print-units", "base"],
                           capture_output=True, text=True, timeout=120)
        raw = q.stdout
        if out_dir:
            out_dir.mkdir(parents=True, exist_ok=True)
            (out_dir / "ncu_details.csv").write_text(raw)
            (out_dir / "ncu_run.log").write_text(log[-20000:])
        return report_from_kernels(parse_details_csv(raw)), raw
    finally:
        shutil.rmtree(jobdir, ignore_errors=True)
