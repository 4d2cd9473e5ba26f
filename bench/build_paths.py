"""New CUDA source -> verdict, three builds side by side (issue 15): plain load_inline, the previous KForge
build (torch/types.h swap + precompiled torch/extension.h), and the split build (kernels by nvcc without torch
headers, host code on torch-lite, thin binding).

    python -m bench.build_paths run OUT.jsonl --kb KERNELBENCH_DIR [--shard I[,J]/N] [--modes split,previous,plain]
                                              [--only TAG_PREFIX] [--no-compile-baseline]
    python -m bench.build_paths run OUT.jsonl --backend cpu     # the CPU backend's examples
    python -m bench.build_paths run OUT.jsonl --backend triton --modes split   # Triton: KForge's one path
                                                (its "split" column: a fresh Triton cache, JIT included)
    python -m bench.build_paths table OUT.jsonl [OUT2.jsonl ...]

Every candidate is made "new" for each measurement: a fresh build cache (extensions, split objects), nothing
built before. What is kept warm, and said so: the precompiled torch/extension.h of the previous build (once
per machine and flags, built first and timed) and the reference's timings (eager, torch.compile) per problem
and device, measured once by a warm-up evaluation of the same problem; a new candidate's verdict does not
wait for them after the first time on a machine. Candidates run one at a time per process (one process per
GPU with --shard); the three builds of a candidate run one after another, so none competes with another,
each with a spare worker ready (its torch import done), as between two rounds of a session. (The first
recorded run, 2026-11-26, did not wait for the spare: its verdict seconds include up to a fresh worker's start.)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kforge_core import ASSETS_DIR, REPO_ROOT
from kforge_core.evaluation import EvalSettings, evaluate
from kforge_core.evaluation.isolation.sandbox import SPARES
from kforge_core.problems import load_problem_file, resolve_problem

HERE = Path(__file__).resolve().parent
HONEST = REPO_ROOT / "tests" / "gpu" / "honest"


def kb_candidates(*names: str) -> list:
    """KernelBench level-1 problems at their real size, each with its candidate in bench/cuda_candidates."""
    return [(f"kb {n}", f"kb:level1/{n}", HERE / "cuda_candidates" / f"kb_L1_{n}.py") for n in names]


# (tag, problem: built-in name or "kb:level1/NAME", candidate source)
CANDIDATES = [
    *kb_candidates("88_MinGPTNewGelu", "12_Matmul_with_diagonal_matrices_", "95_CrossEntropyLoss", "40_LayerNorm",
                   "44_Average_Pooling_1D", "42_Max_Pooling_2D"),
    *[(f"example {n}", n, ASSETS_DIR / "examples" / "cuda" / f"{n}.py") for n in (
        "level1/1_ReLU", "level1/2_Sum_reduction_over_a_dimension", "level1/3_Softmax", "level1/6_LayerNorm",
        "level1/7_GELU", "level2/5_Scale_Residual_Add_Clamp")],
    ("honest add", "honest:add_problem.py", HONEST / "add_cuda.py"),
    ("honest tiled matmul", "level1/4_Square_matrix_multiplication", HONEST / "tiled_matmul_cuda.py"),
    ("honest new gelu", "level1/8_NewGELU", HONEST / "new_gelu_cuda.py"),
    ("fallback: templated kernel", "level1/1_ReLU", HERE / "cuda_candidates" / "templated_relu_fallback.py"),
    *kb_candidates("21_Sigmoid", "23_Softmax"),  # added later: at the end, so earlier shards keep their candidates
]
REFERENCE_CACHES = ("reference_timings", "device_bandwidth", "reference_memory")


def problem_for(spec: str, kb: Path | None):
    if spec.startswith("kb:"):
        return load_problem_file(kb / (spec[3:] + ".py"))
    if spec.startswith("honest:"):
        return load_problem_file(HONEST / spec[7:])
    return resolve_problem(spec)


def fresh_cache(warm: Path) -> Path:
    """An empty build cache that keeps the warm cache's reference measurements (see the module's note)."""
    d = Path(tempfile.mkdtemp(prefix="kforge-bp-"))
    for name in REFERENCE_CACHES:
        if (warm / name).is_dir():
            shutil.copytree(warm / name, d / name)
    return d


def shipped_candidates(backend: str) -> list:
    """A backend's shipped examples: the CPU's C++ (load_inline's cpp_sources), Triton's kernels (JIT-compiled
    on first launch, into the fresh cache's Triton folder), plus the honest Triton add for Triton."""
    from kforge_core.backends import get_backend

    b = get_backend(backend)
    extra = [("honest add (triton)", "honest:add_problem.py", HONEST / "add_triton.py")] if backend == "triton" else []
    return [(f"{backend} example {n}", n, b.example_for(n)) for n in b.example_problems()] + extra


def kforge(problem, source: str, warm: Path, split: bool, backend: str = "cuda", compile_baseline: bool = True) -> dict:
    cache = fresh_cache(warm)
    spare = SPARES.wait_ready()  # between rounds the model's answer takes longer than a spare's imports
    t0 = time.monotonic()
    r = evaluate(problem, source, backend, EvalSettings(cache_dir=str(cache), split_build=split,
                                                        compile_reference=compile_baseline))
    total = time.monotonic() - t0
    shutil.rmtree(cache, ignore_errors=True)
    return {"verdict_s": round(total, 2), "backend": backend, "spare_worker_ready": spare, "verdict": r.verdict.value, "build_s": r.stage_seconds.get("build"),
            "stages": r.stage_seconds, "detail_s": r.detail_seconds, "build_notes": r.build_notes, "speedup": r.speedup("eager"),
            "flags": r.flags, "messages": r.messages[:2]}


def plain_load_inline(path: Path) -> dict:
    """A fresh process importing the candidate with an empty extensions folder: load_inline as written."""
    env = {**os.environ, "TORCH_EXTENSIONS_DIR": tempfile.mkdtemp(prefix="plain-ext-"), "PYTHONPATH": str(REPO_ROOT)}
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-c", "import runpy, sys; runpy.run_path(sys.argv[1])", str(path)],
                       env=env, capture_output=True, text=True)
    shutil.rmtree(env["TORCH_EXTENSIONS_DIR"], ignore_errors=True)
    return {"build_s": round(time.monotonic() - t0, 2), "ok": p.returncode == 0, "error": p.stderr[-300:] if p.returncode else ""}


def run(a) -> None:
    kb = Path(a.kb) if a.kb else None
    ids, n = a.shard.split("/")
    ids, n = {int(x) for x in ids.split(",")}, int(n)
    mine = [c for k, c in enumerate(CANDIDATES if a.backend == "cuda" else shipped_candidates(a.backend))
            if k % n in ids and c[0].startswith(a.only)]
    warm = Path(os.environ.get("KFORGE_CACHE_DIR") or tempfile.mkdtemp(prefix="kforge-warm-"))
    modes = a.modes.split(",")
    os.environ.setdefault("KFORGE_PCH_DIR", str(warm / "precompiled_headers"))  # shared by the fresh caches
    out = open(a.out, "a")
    # a spare worker for the first candidate too (later ones find the one started after the previous job)
    from kforge_core.backends import get_backend
    from kforge_core.evaluation.evaluator import worker_env

    SPARES.replenish(worker_env(get_backend(a.backend), EvalSettings(cache_dir=str(warm)), None),
                     "kforge_core.evaluation.worker.main")
    for k, (tag, spec, path) in enumerate(mine):
        problem, source = problem_for(spec, kb), path.read_text()
        t0 = time.monotonic()  # warm-up: the reference's timings per problem; the first one also builds the
        # previous build's precompiled header (split_build=False). Without the torch.compile baseline only
        # that first one is needed.
        if a.compile_baseline or (k == 0 and "previous" in modes):
            evaluate(problem, source, a.backend, EvalSettings(cache_dir=str(warm), compile_reference=a.compile_baseline,
                                                             split_build=k > 0 or "previous" not in modes))
        row = {"tag": tag, "problem": problem.name, "source": str(path.relative_to(REPO_ROOT)),
               "warm_up_s": round(time.monotonic() - t0, 1), "compile_baseline": a.compile_baseline}
        if "split" in modes:
            row["split"] = kforge(problem, source, warm, True, a.backend, a.compile_baseline)
        if "previous" in modes:
            row["previous"] = kforge(problem, source, warm, False, a.backend, a.compile_baseline)
        if "plain" in modes:
            row["plain"] = plain_load_inline(path)
        print(json.dumps(row), flush=True)
        out.write(json.dumps(row) + "\n")
        out.flush()


def path_taken(result: dict) -> str:
    if result.get("backend") == "triton":
        return "Triton JIT"
    notes = " ".join(result.get("build_notes") or [])
    if "split build:" in notes:
        return "split"
    reason = next((n.split(": ", 1)[1] for n in result.get("build_notes") or [] if n.startswith("split build not used")), "")
    return f"load_inline ({reason[:70]})" if reason else "load_inline"


def merged_rows(files: list[str]) -> list[dict]:
    """One row per candidate: runs that measured different modes of the same candidate are merged."""
    rows: dict[str, dict] = {}
    for f in files:
        for line in Path(f).read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                rows.setdefault(r["tag"], {}).update(r)
    return list(rows.values())


def table(files: list[str]) -> None:
    rows = merged_rows(files)
    print("| candidate | verdict (split / previous) | split: path | build s: plain / previous / split | "
          "verdict s: previous / split | split stages s |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        s, p, pl = r.get("split", {}), r.get("previous", {}), r.get("plain", {})
        st = s.get("stages", {})
        print(f"| {r['tag']} | {s.get('verdict')} / {p.get('verdict')} | {path_taken(s)} | "
              f"{pl.get('build_s')} / {p.get('build_s')} / {s.get('build_s')} | {p.get('verdict_s')} / {s.get('verdict_s')} | "
              f"start {st.get('start')}, build {st.get('build')}, correctness {st.get('correctness')}, timing {st.get('timing')} |")
    split = [r["split"] for r in rows if "split" in r]
    fast = [s for s in split if path_taken(s) == "split"]
    same = [r for r in rows if "split" in r and "previous" in r and r["split"]["verdict"] == r["previous"]["verdict"]]

    def med(xs):
        xs = [x for x in xs if x is not None]
        return round(statistics.median(xs), 2) if xs else None

    print(f"\ncandidates: {len(rows)}; split path taken: {len(fast)}/{len(split)}; "
          f"verdicts equal (split vs previous): {len(same)}/{sum(1 for r in rows if 'split' in r and 'previous' in r)}")
    print(f"median build s: plain {med([r.get('plain', {}).get('build_s') for r in rows])}, previous "
          f"{med([r.get('previous', {}).get('build_s') for r in rows])}, split {med([s.get('build_s') for s in split])} "
          f"(split path only: {med([s.get('build_s') for s in fast])})")
    print(f"median new source -> verdict s: previous {med([r.get('previous', {}).get('verdict_s') for r in rows])}, "
          f"split {med([s.get('verdict_s') for s in split])} (split path only: {med([s.get('verdict_s') for s in fast])})")
    ratios = [r["plain"]["build_s"] / r["split"]["build_s"] for r in rows
              if r.get("plain", {}).get("build_s") and r.get("split", {}).get("build_s")]
    if ratios:
        print(f"plain load_inline build / split build: median {med(ratios)}x")


def main() -> int:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("out")
    r.add_argument("--kb", help="KernelBench folder (with level1/)")
    r.add_argument("--shard", default="0/1")
    r.add_argument("--modes", default="split,previous,plain")
    r.add_argument("--backend", default="cuda", choices=("cuda", "cpu", "triton"))
    r.add_argument("--only", default="", help="candidates whose tag starts with this (e.g. 'kb')")
    r.add_argument("--no-compile-baseline", dest="compile_baseline", action="store_false",
                   help="no torch.compile timing of the reference (no per-problem warm-up evaluation needed)")
    t = sub.add_parser("table")
    t.add_argument("files", nargs="+")
    a = ap.parse_args()
    run(a) if a.cmd == "run" else table(a.files)
    return 0


if __name__ == "__main__":
    sys.exit(main())
