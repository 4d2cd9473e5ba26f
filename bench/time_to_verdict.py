"""Time to verdict: KForge's evaluator (cold and warm build cache) vs plain load_inline on the same sources.

    python -m bench.time_to_verdict OUT_DIR [--backend cuda] [--jobs N] [problem ...]

For each problem three things run side by side, so all see the same machine load (--jobs N: N problems
at once): the plain build (a fresh process importing the example with an empty extensions folder: the
time to a loaded module, no verdict), KForge's cold evaluation (empty caches: build, 3 correctness trials,
anti-cheat checks, timing vs eager and torch.compile) and the same cold evaluation with the fast build
off (torch's load_inline exactly as written). "Cold" keeps one thing: the precompiled torch/extension.h,
which depends on the compiler flags and the torch install, not on the candidate, and is compiled once
per machine first (its seconds are printed). Then KForge evaluates the same source again with its caches
warm (build, torch.compile baseline): once with a spare worker ready, as between two rounds, and once
starting a fresh process. Prints a table and the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kforge_core import REPO_ROOT
from kforge_core.backends import get_backend
from kforge_core.evaluation import EvalSettings, evaluate
from kforge_core.evaluation.building.fast_build import BACKENDS as FAST_BUILD_BACKENDS
from kforge_core.evaluation.isolation.sandbox import SPARES
from kforge_core.problems import resolve_problem

SETTINGS = {}  # the default verdict: 3 trials, anti-cheat checks, eager and torch.compile timings


def plain_build_seconds(example: Path) -> float:
    env = {**os.environ, "TORCH_EXTENSIONS_DIR": tempfile.mkdtemp(prefix="plain-ext-"),
           "TRITON_CACHE_DIR": tempfile.mkdtemp(prefix="plain-triton-"), "PYTHONPATH": str(REPO_ROOT)}
    env.pop("TORCH_CUDA_ARCH_LIST", None)
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-c", "import runpy, sys; runpy.run_path(sys.argv[1])", str(example)],
                       env=env, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(p.stderr[-2000:])
    return time.monotonic() - t0


def kforge_run(problem, source, backend, cache: str, fast_build: bool = True) -> dict:
    t0 = time.monotonic()
    r = evaluate(problem, source, backend, EvalSettings(cache_dir=cache, fast_build=fast_build, **SETTINGS))
    return {"s": round(time.monotonic() - t0, 2), "verdict": r.verdict.value, "build_notes": r.build_notes,
            "stages": {**r.stage_seconds, **{f"  {k}": v for k, v in r.detail_seconds.items()}}}


def cold_triple(b, name: str) -> dict:
    """Plain load_inline, KForge's cold evaluation, and the same without the fast build, side by side."""
    example, problem = b.example_for(name), resolve_problem(name)
    cache = tempfile.mkdtemp(prefix="kforge-cache-")
    with ThreadPoolExecutor(3) as pool:
        plain = pool.submit(plain_build_seconds, example)
        cold = pool.submit(kforge_run, problem, example.read_text(), b, cache)
        slow = pool.submit(kforge_run, problem, example.read_text() + "\n# fast build off\n", b,
                           tempfile.mkdtemp(prefix="kforge-cache-"), False)
        return {"name": name, "cache": cache, "plain_s": plain.result(), "cold": cold.result(),
                "cold_no_fast_build": slow.result()}


def precompile_headers(b, names: list[str]) -> float:
    """Build each example once (throwaway caches) so the precompiled headers its flags need exist."""
    t0 = time.monotonic()
    with ThreadPoolExecutor(len(names)) as pool:
        list(pool.map(lambda n: evaluate(resolve_problem(n), b.example_for(n).read_text() + "\n# pch\n", b,
                                         EvalSettings(cache_dir=tempfile.mkdtemp(prefix="kforge-pch-"), timing=False)),
                      names))
    return time.monotonic() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--jobs", type=int, default=1, help="problems whose cold builds run at once")
    ap.add_argument("problems", nargs="*")
    a = ap.parse_intermixed_args()
    out, backend = Path(a.out), a.backend
    b = get_backend(backend)
    names = a.problems or b.example_problems()[:5]
    os.environ["KFORGE_PCH_DIR"] = str(Path(tempfile.mkdtemp(prefix="kforge-pch-dir-")))
    pch_s = precompile_headers(b, names) if backend in FAST_BUILD_BACKENDS else 0.0
    print(json.dumps({"precompiled_headers_once_s": round(pch_s, 1)}), flush=True)
    with ThreadPoolExecutor(a.jobs) as pool:
        colds = list(pool.map(lambda n: cold_triple(b, n), names))
    rows = []
    for c in colds:  # warm: the same source again, the build (and the torch.compile baseline) cached
        problem, src = resolve_problem(c["name"]), b.example_for(c["name"]).read_text()
        os.environ["KFORGE_SPARE_WORKERS"] = "1"
        kforge_run(problem, src, b, c["cache"])  # leaves a spare worker, as a previous round would
        SPARES.wait_ready()  # between rounds the model's answer takes longer than the spare's imports
        warm = kforge_run(problem, src, b, c["cache"])
        os.environ["KFORGE_SPARE_WORKERS"] = "0"
        fresh = kforge_run(problem, src, b, c["cache"])
        rows.append({"problem": c["name"], "backend": backend, "cold_jobs_at_once": a.jobs,
                     "plain_load_inline_s": round(c["plain_s"], 2), "kforge_cold_s": c["cold"]["s"],
                     "kforge_cold_no_fast_build_s": c["cold_no_fast_build"]["s"],
                     "cold_build_notes": c["cold"]["build_notes"],
                     "kforge_warm_s": warm["s"], "kforge_warm_fresh_process_s": fresh["s"],
                     "verdicts": [c["cold"]["verdict"], c["cold_no_fast_build"]["verdict"], warm["verdict"],
                                  fresh["verdict"]],
                     "plain_over_warm": round(c["plain_s"] / warm["s"], 2),
                     "plain_over_cold": round(c["plain_s"] / c["cold"]["s"], 2),
                     "no_fast_build_over_cold": round(c["cold_no_fast_build"]["s"] / c["cold"]["s"], 2),
                     "warm_stages_s": warm["stages"], "fresh_stages_s": fresh["stages"], "cold_stages_s": c["cold"]["stages"]})
        print(json.dumps(rows[-1]), flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"time_to_verdict_{backend}.json").write_text(json.dumps({"precompiled_headers_once_s": round(pch_s, 1),
                                                                     "rows": rows}, indent=1))
    print(f"\nprecompiled headers, once per machine and flags: {pch_s:.1f} s")
    print("| problem | plain load_inline (s) | KForge cold (s) | cold, fast build off (s) | KForge warm (s) | "
          "warm, no spare worker (s) | plain / warm | plain / cold | fast build off / on (cold) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['problem']} | {r['plain_load_inline_s']} | {r['kforge_cold_s']} | "
              f"{r['kforge_cold_no_fast_build_s']} | {r['kforge_warm_s']} | {r['kforge_warm_fresh_process_s']} | "
              f"{r['plain_over_warm']}x | {r['plain_over_cold']}x | {r['no_fast_build_over_cold']}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
