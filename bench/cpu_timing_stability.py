"""CPU timings you can trust (issue 17): the same candidate evaluated N times on a quiet machine, then N times
beside K busy processes, side by side in one run.

    python -m bench.cpu_timing_stability OUT [--problem level1/3_Softmax] [--runs 3] [--busy 2]

Prints each evaluation's eager / candidate medians, speedup, thread count and flags, then: the idle spread
(max/min speedup, target within 25 %), and under load whether every result is within 25 % of the idle median
speedup or flagged "unstable timing". Writes OUT/cpu_timing_stability.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def evaluate_once(problem, source, threads: int | None = None) -> dict:
    from kforge_core.evaluation import EvalSettings, evaluate

    r = evaluate(problem, source, "cpu", EvalSettings(compile_reference=False, threads=threads))
    t = r.timings
    return {"verdict": r.verdict.value, "eager_ms": t["eager"].median_ms if "eager" in t else None,
            "candidate_ms": t["candidate"].median_ms if "candidate" in t else None, "speedup": r.speedup("eager"),
            "unstable": r.timing_unstable, "flags": r.flags, "timing_notes": r.timing_notes}


def main(argv=None) -> int:
    from kforge_core import ASSETS_DIR
    from kforge_core.problems import resolve_problem

    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--problem", default="level1/3_Softmax")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--busy", type=int, default=2)
    args = ap.parse_args(argv)
    problem = resolve_problem(args.problem)
    source = (ASSETS_DIR / "examples" / "cpu" / f"{args.problem}.py").read_text()
    evaluate_once(problem, source)  # build once: every measured evaluation below is a warm one
    rows = []
    # "busy, all threads": the thread count fixed at every core, as before the fix (the cause, side by side)
    for phase in ("idle", "busy", "busy, all threads"):
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)] \
            if phase != "idle" else []
        try:
            time.sleep(0.5 if hogs else 0)
            for i in range(args.runs):
                threads = os.cpu_count() if phase == "busy, all threads" else None
                row = {"phase": phase, "run": i + 1, **evaluate_once(problem, source, threads)}
                rows.append(row)
                sp = f"{row['speedup']:.3f}x" if row["speedup"] else "-"
                print(f"{phase} {i + 1}: eager {row['eager_ms']:.4f} ms, candidate {row['candidate_ms']:.4f} ms, "
                      f"speedup {sp}, unstable {row['unstable']} "
                      f"{'; '.join(row['timing_notes'])}", flush=True)
        finally:
            for h in hogs:
                h.kill()
                h.wait()
    idle = [r["speedup"] for r in rows if r["phase"] == "idle" and r["speedup"]]
    ref = statistics.median(idle)
    spread = max(idle) / min(idle)
    busy_ok = [r["unstable"] or abs(r["speedup"] / ref - 1) <= 0.25 for r in rows if r["phase"] == "busy"]
    fixed = [r["speedup"] for r in rows if r["phase"] == "busy, all threads" and r["speedup"]]
    summary = {"cpus": os.cpu_count(), "problem": args.problem, "idle_median_speedup": ref,
               "idle_max_over_min": spread, "idle_within_25pct": spread <= 1.25,
               "busy_within_25pct_or_flagged": f"{sum(busy_ok)}/{len(busy_ok)}",
               "busy_all_threads_speedups": fixed}
    print(json.dumps(summary, indent=1))
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "cpu_timing_stability.json").write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
