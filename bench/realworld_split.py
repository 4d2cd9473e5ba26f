"""Split-build coverage of real LLM-written sources, compile only (no GPU needed; a CUDA build of torch is).

    python -m bench.realworld_split OUT.jsonl [--root ../shared/realworld] [--sample N] [--jobs J]

Every kernel of the folder's manifest.jsonl (or an evenly spaced sample of N) is executed with
`load_inline` replaced by a recorder, and each recorded call is built through the split build alone. One JSON
line per source: path taken ("split" or "fallback") and the fallback's reason; a summary on stdout. Run it
with the python of a CUDA build of torch (KFORGE_CUDA_PYTHON in CI).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# Run in a child per source: a source's module-level code may do anything, and builds must not share state.
_CHILD = r"""
import json, sys
from pathlib import Path
import torch.utils.cpp_extension as ce
from kforge_core.evaluation.building import split_build as SB
from kforge_core.evaluation.building.recorder import record_builds
root, path = Path(sys.argv[1]), sys.argv[2]


def init_inputs(problem):
    ns = {"__name__": "kforge_problem"}
    exec(compile(Path(problem).read_text(), problem, "exec"), ns)
    return ns["get_init_inputs"]()


calls = record_builds(Path(path).read_text(), path, init_inputs(sys.argv[3]) if len(sys.argv) > 3 else None)
if not calls:
    print(json.dumps({"path": "none", "reason": "no load_inline call found"})); sys.exit(0)
reasons = []
for k in calls:
    try:
        SB.SplitBuilder(root, []).build(**SB.build_arguments(k))
    except SB.SplitFailed as e:
        reasons.append(str(e).splitlines()[0][:300])
print(json.dumps({"path": "fallback" if reasons else "split", "reason": "; ".join(reasons), "calls": len(calls)}))
"""


def kernels(root: Path, sample: int | None) -> list[tuple[str, str]]:
    """(kernel, problem) paths relative to root, sorted by kernel."""
    rows = [json.loads(l) for l in (root / "manifest.jsonl").read_text().splitlines() if l.strip()]
    paths = sorted({(r["kernel"], r["problem"]) for r in rows})
    if sample and sample < len(paths):
        step = len(paths) / sample
        paths = [paths[int(i * step)] for i in range(sample)]
    return paths


def build_one(root: Path, pair: tuple[str, str], work: Path, python: str) -> dict:
    rel, problem = pair
    env = {**os.environ, "PYTHONPATH": str(REPO), "TORCH_CUDA_ARCH_LIST": os.environ.get("TORCH_CUDA_ARCH_LIST", "9.0a")}
    if not env.get("CUDA_HOME") and Path("/usr/local/cuda/include/cuda_runtime.h").exists():
        env["CUDA_HOME"] = "/usr/local/cuda"
    d = work / rel.replace("/", "_").removesuffix(".py")
    d.mkdir(parents=True, exist_ok=True)
    try:
        p = subprocess.run([python, "-c", _CHILD, str(d), str(root / rel), str(root / problem)], capture_output=True, text=True,
                           env=env, timeout=600, cwd=d)
        row = json.loads(p.stdout.strip().splitlines()[-1]) if p.stdout.strip() else \
            {"path": "error", "reason": p.stderr.strip().splitlines()[-1][:300] if p.stderr.strip() else "no output"}
    except (subprocess.TimeoutExpired, json.JSONDecodeError) as e:
        row = {"path": "error", "reason": type(e).__name__}
    return {"kernel": rel, **row}


def run(root: Path, out: Path, sample: int | None, jobs: int, python: str) -> list[dict]:
    work = out.parent / (out.stem + "_builds")
    with ThreadPoolExecutor(jobs) as pool:
        rows = list(pool.map(lambda pair: build_one(root, pair, work, python), kernels(root, sample)))
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


def summary(rows: list[dict]) -> str:
    paths = collections.Counter(r["path"] for r in rows)
    built = [r for r in rows if r["path"] in ("split", "fallback")]
    share = paths["split"] / len(built) if built else 0.0
    lines = [f"{len(rows)} sources: {dict(paths)}; split path {paths['split']}/{len(built)} = {share:.1%} of those "
             "that call load_inline"]
    for r in rows:
        if r["path"] != "split":
            lines.append(f"  {r['kernel']}: {r['path']}: {r['reason']}")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--root", type=Path, default=REPO.parent / "shared" / "realworld")
    ap.add_argument("--sample", type=int)
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    ap.add_argument("--python", default=os.environ.get("KFORGE_CUDA_PYTHON", sys.executable))
    a = ap.parse_args(argv)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    print(summary(run(a.root.resolve(), a.out.resolve(), a.sample, a.jobs, a.python)))


if __name__ == "__main__":
    main()
