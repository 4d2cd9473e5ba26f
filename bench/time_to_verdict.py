"""Time to verdict: KForge's evaluator (cold and warm build cache) vs plain load_inline on the same sources.

    python -m bench.time_to_verdict OUT_DIR [--backend cuda] [problem ...]

For each problem the plain build (a fresh process importing the example with an empty extensions
folder: the time to a loaded module, no verdict) and KForge's cold evaluation (empty cache: build,
3 correctness trials, timing vs eager) run side by side, so both see the same machine load; then KForge
evaluates the same source again with its cache warm. Prints a table and the ratios.
"""

from __future__ import annotations

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
from kforge_core.problems import resolve_problem

SETTINGS = dict(compile_reference=False)


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


def kforge_seconds(problem, source, backend, cache: str) -> tuple[float, str]:
    t0 = time.monotonic()
    r = evaluate(problem, source, backend, EvalSettings(cache_dir=cache, **SETTINGS))
    return time.monotonic() - t0, r.verdict.value


def main() -> int:
    args = sys.argv[1:]
    out = Path(args.pop(0))
    backend = "cuda"
    if args[:1] == ["--backend"]:
        backend, args = args[1], args[2:]
    b = get_backend(backend)
    names = args or b.example_problems()[:5]
    rows = []
    for name in names:
        example, problem = b.example_for(name), resolve_problem(name)
        cache = tempfile.mkdtemp(prefix="kforge-cache-")
        with ThreadPoolExecutor(2) as pool:
            plain = pool.submit(plain_build_seconds, example)
            cold = pool.submit(kforge_seconds, problem, example.read_text(), b, cache)
            plain_s, (cold_s, cold_v) = plain.result(), cold.result()
        warm_s, warm_v = kforge_seconds(problem, example.read_text(), b, cache)
        rows.append({"problem": name, "backend": backend, "plain_load_inline_s": round(plain_s, 2),
                     "kforge_cold_s": round(cold_s, 2), "kforge_warm_s": round(warm_s, 2),
                     "verdicts": [cold_v, warm_v], "plain_over_warm": round(plain_s / warm_s, 2),
                     "plain_over_cold": round(plain_s / cold_s, 2)})
        print(json.dumps(rows[-1]), flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"time_to_verdict_{backend}.json").write_text(json.dumps(rows, indent=1))
    print(f"\n| problem | plain load_inline (s) | KForge cold verdict (s) | KForge warm verdict (s) | plain / warm | plain / cold |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['problem']} | {r['plain_load_inline_s']} | {r['kforge_cold_s']} | {r['kforge_warm_s']} | "
              f"{r['plain_over_warm']}x | {r['plain_over_cold']}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
