"""Timing fidelity: the same candidate measured in 5 fresh evaluator processes (coefficient of variation),
against Nsight Compute's gpu__time_duration (clocks not locked) and triton.testing.do_bench.

    python -m bench.timing_fidelity OUT_DIR [problem ...]
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


def main() -> int:
    out = Path(sys.argv[1])
    names = sys.argv[2:] or ["level1/2_Sum_reduction_over_a_dimension", "level2/5_Scale_Residual_Add_Clamp"]
    cuda = get_backend("cuda")
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
               "do_bench_ms": round(do_bench, 5) if do_bench else p.stderr[-500:],
               "kforge_over_do_bench": round(med / do_bench, 3) if do_bench else None,
               "gpu": runs[0].environment.get("gpu")}
        rows.append(row)
        print(json.dumps(row), flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "timing_fidelity.json").write_text(json.dumps(rows, indent=1))
    print("\n| problem | CV candidate (5 processes) | CV speedup | KForge / ncu gpu__time_duration | KForge / do_bench |")
    print("| --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['problem']} | {r['cv_candidate']:.2%} | {r['cv_speedup']:.2%} | {r['kforge_over_ncu']} | "
              f"{r['kforge_over_do_bench']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
