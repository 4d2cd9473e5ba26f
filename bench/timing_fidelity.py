"""Timing fidelity: the same candidate measured in 5 fresh evaluator processes (coefficient of variation),
against Nsight Compute's gpu__time_duration (clocks not locked) and triton.testing.do_bench.

    python -m bench.timing_fidelity OUT_DIR [problem ...]

The events around a call time the GPU from the start event to the end event: the kernels plus a fixed cost
of launching into an event pair, which ncu's per-kernel duration does not hold. To show that cost rather
than assume it, an empty kernel (torch.cuda._sleep(0)) is timed the same way and under ncu; the table
gives KForge / ncu both as measured and with that fixed cost taken out.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

from kforge_core.backends import get_backend
from kforge_core.evaluation import EvalSettings, evaluate
from kforge_core.problems import resolve_problem
from profiler_adapters import ncu

REPEATS = 5
DO_BENCH = r"""
import sys, json, torch, triton.testing
from kforge_core.problems import resolve_problem
from kforge_core.backends import get_backend
from bench.candidate_model import load_candidate
model, inputs = load_candidate(resolve_problem(sys.argv[1]), get_backend("cuda").example_for(sys.argv[1]).read_text())
ms = triton.testing.do_bench(lambda: model(*inputs), warmup=50, rep=500, return_mode="median")
print(json.dumps({"do_bench_ms": ms}))
"""

EMPTY_KERNEL = r"""
import json, torch
from kforge_core.evaluation.judging import timing as T
clock = T.make_clock("cuda")
stats = T.measure({"empty": lambda: torch.cuda._sleep(0)}, clock, 3, 200, 200, 0.0)
print(json.dumps({"kforge_empty_kernel_ms": stats["empty"].median_ms}))
"""


def empty_kernel_cost() -> dict:
    """The empty kernel timed by KForge's clock, and its duration under ncu (median over 50 launches)."""
    p = subprocess.run([sys.executable, "-c", EMPTY_KERNEL], capture_output=True, text=True)
    out = {"kforge_empty_kernel_ms": json.loads(p.stdout.strip().splitlines()[-1])["kforge_empty_kernel_ms"]
           if p.returncode == 0 else None}
    ncu_bin = ncu.ncu_path()
    if ncu_bin:
        q = subprocess.run([ncu_bin, "--csv", "--metrics", "gpu__time_duration.sum", "--clock-control", "none",
                            "-k", "regex:spin", "-c", "50", sys.executable, "-c", EMPTY_KERNEL],
                           capture_output=True, text=True)
        vals = [ncu.time_us(k, "gpu__time_duration.sum") / 1e3 for k in ncu.parse_details_csv(q.stdout)
                if "gpu__time_duration.sum" in k.metrics]
        out["ncu_empty_kernel_ms"] = statistics.median(vals) if vals else None
    ok = out.get("kforge_empty_kernel_ms") is not None and out.get("ncu_empty_kernel_ms") is not None
    out["fixed_cost_ms"] = out["kforge_empty_kernel_ms"] - out["ncu_empty_kernel_ms"] if ok else None
    print(json.dumps(out), flush=True)
    return out


def main() -> int:
    out = Path(sys.argv[1])
    names = sys.argv[2:] or ["level1/2_Sum_reduction_over_a_dimension", "level1/6_LayerNorm"]
    cuda = get_backend("cuda")
    empty = empty_kernel_cost()
    fixed = empty.get("fixed_cost_ms")
    rows = []
    for name in names:
        src, problem = cuda.example_for(name).read_text(), resolve_problem(name)
        runs = [evaluate(problem, src, cuda, EvalSettings(compile_reference=False)) for _ in range(REPEATS)]
        cand = [r.timings["candidate"].median_ms for r in runs]
        speed = [r.speedup("eager") for r in runs]
        report, _ = ncu.profile(problem, src, "cuda", extra_metrics=(), clock_control="none")
        dur = next(m for m in report.metrics if m.name == "total kernel time").value / 1e3  # us -> ms
        p = subprocess.run([sys.executable, "-c", DO_BENCH, name], capture_output=True, text=True)
        do_bench = json.loads(p.stdout.strip().splitlines()[-1])["do_bench_ms"] if p.returncode == 0 else None
        med = statistics.median(cand)
        row = {"problem": name, "candidate_median_ms_per_process": [round(c, 5) for c in cand],
               "cv_candidate": round(statistics.pstdev(cand) / statistics.fmean(cand), 4),
               "speedups": [round(s, 3) for s in speed],
               "cv_speedup": round(statistics.pstdev(speed) / statistics.fmean(speed), 4),
               "ncu_gpu_time_ms": round(dur, 5), "kforge_over_ncu": round(med / dur, 3),
               "kforge_less_fixed_cost_over_ncu": round((med - fixed) / dur, 3) if fixed is not None else None,
               "do_bench_ms": round(do_bench, 5) if do_bench else p.stderr[-500:],
               "kforge_over_do_bench": round(med / do_bench, 3) if do_bench else None,
               "gpu": runs[0].environment.get("gpu")}
        rows.append(row)
        print(json.dumps(row), flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "timing_fidelity.json").write_text(json.dumps({"empty_kernel": empty, "rows": rows}, indent=1))
    print(f"\nempty kernel: {empty}")
    print("| problem | candidate median (ms) | CV candidate (5 processes) | CV speedup | KForge / ncu "
          "gpu__time_duration | (KForge - fixed cost) / ncu | KForge / do_bench |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['problem']} | {statistics.median(r['candidate_median_ms_per_process']):.5f} | "
              f"{r['cv_candidate']:.2%} | {r['cv_speedup']:.2%} | {r['kforge_over_ncu']} | "
              f"{r['kforge_less_fixed_cost_over_ncu']} | {r['kforge_over_do_bench']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
