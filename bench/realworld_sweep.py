"""Real LLM-written kernels through the batch engine on the GPU: KForge's verdict beside KernelBench's.

    python -m bench.realworld_sweep run OUT_DIR [--root ../shared/realworld] [--tag after] [--only a,b]
                                                [--sample N] [--shard i/n] [--build-workers N]
    python -m bench.realworld_sweep table OUT_DIR        # table.md: per level and model, every disagreement

`run` evaluates each (problem, kernel) pair of the folder's manifest.jsonl through the local process pool
(build workers on the CPU, one GPU worker), as `kforge bench` places work, with the default verdict settings
except torch.compile timing (KernelBench's speedup is vs eager). It writes one JSON line per kernel as it
finishes (`rows_TAG.jsonl`) and `summary_TAG.json`: wall time, verdicts per minute, the GPU's busy fraction
(nvidia-smi, whole run and after the first minute) and the GPU stages' time over wall, build and verdict
medians, and the median seconds of each part of a GPU stage. Only public API is used, so the same file runs
against an older checkout (PYTHONPATH=that checkout) for a before/after comparison in one device call.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

SETTINGS = {"compile_reference": False}


class GpuSampler:
    """nvidia-smi utilization.gpu of GPU 0 every 200 ms, with the time of each sample."""

    def __init__(self):
        self.samples: list[tuple[float, float]] = []
        self._proc = None

    def __enter__(self):
        try:
            self._proc = subprocess.Popen(["nvidia-smi", "--query-gpu=index,utilization.gpu",
                                           "--format=csv,noheader,nounits", "-lms", "200", "-i", "0"],
                                          stdout=subprocess.PIPE, text=True)
        except OSError:
            return self
        self.t0 = time.monotonic()
        threading.Thread(target=self._read, daemon=True).start()
        return self

    def _read(self):
        for line in self._proc.stdout:
            parts = [p.strip() for p in line.split(",")]
            if len(parts) == 2 and parts[1].replace(".", "").isdigit():
                self.samples.append((time.monotonic() - self.t0, float(parts[1])))

    def __exit__(self, *exc):
        if self._proc:
            self._proc.terminate()
            self._proc.wait()

    def busy(self, after_s: float = 0.0) -> float | None:
        xs = [u for t, u in self.samples if t >= after_s]
        return round(statistics.fmean(xs) / 100, 3) if xs else None


def pairs(root: Path, only: set[str] | None, sample: int | None, shard: str | None,
          skip: list[Path] = ()) -> list[dict]:
    rows = [json.loads(l) for l in (root / "manifest.jsonl").read_text().splitlines() if l.strip()]
    rows.sort(key=lambda r: r["kernel"])
    done = {json.loads(l)["kernel"] for f in skip for l in Path(f).read_text().splitlines() if l.strip()}
    rows = [r for r in rows if r["kernel"] not in done]
    if only:
        rows = [r for r in rows if Path(r["kernel"]).stem in only or r["kernel"] in only]
    if sample and sample < len(rows):
        step = len(rows) / sample
        rows = [rows[int(i * step)] for i in range(sample)]
    if shard:
        i, n = (int(x) for x in shard.split("/"))
        rows = rows[i::n]
    return rows


def build_path(result) -> str:
    notes = " ".join(getattr(result, "build_notes", []) or [])
    if "split build:" in notes:
        return "split"
    return "load_inline" if notes or result.stage_seconds.get("build") else ""


def run(out: Path, root: Path, tag: str, rows: list[dict], build_workers: int | None, overrides: dict) -> dict:
    from kforge_core.evaluation import EvalSettings
    from kforge_core.executors import PoolExecutor
    from kforge_core.problems import load_problem_file

    settings = EvalSettings.from_dict({**SETTINGS, **overrides})
    ex = PoolExecutor.for_backend("cuda", 1, build_workers)
    out.mkdir(parents=True, exist_ok=True)
    sink = (out / f"rows_{tag}.jsonl").open("a")
    lock = threading.Lock()

    def one(m):
        t0 = time.monotonic()
        try:
            problem = load_problem_file(root / m["problem"])
            r = ex.evaluate(problem, (root / m["kernel"]).read_text(), "cuda", settings)
            row = {"verdict": r.verdict.value, "headline": (r.messages or [""])[0][:400],
                   "speedup": r.speedup("eager"), "flags": r.flags, "own_kernel_share": r.own_kernel_share,
                   "attribution": {k: v for k, v in (getattr(r, "attribution", {}) or {}).items()
                                   if k in ("replaced_share", "policy")},
                   "build_path": build_path(r), "build_notes": r.build_notes[:3],
                   "stage_seconds": r.stage_seconds, "detail_seconds": r.detail_seconds,
                   "device_s": round(r.duration_s, 2), "gpu": (r.environment or {}).get("gpu", ""),
                   "trials": [{k: getattr(x, k, None) for k in ("passed", "max_abs_err", "max_rel_err", "worst")}
                              for x in r.trials][:3]}
        except Exception as e:  # a harness failure of this bench, recorded rather than lost
            row = {"verdict": "bench_error", "headline": f"{type(e).__name__}: {e}"[:400]}
        row = {"kernel": m["kernel"], "level": m["level"], "model": m["model"],
               "kernelbench_verdict": m["kernelbench_verdict"], "kernelbench_speedup": m["kernelbench_speedup"],
               **row, "wall_s": round(time.monotonic() - t0, 2)}
        with lock:
            sink.write(json.dumps(row) + "\n")
            sink.flush()
        return row

    with GpuSampler() as gs, ThreadPoolExecutor(ex.build_workers + 2) as drivers:
        t0 = time.monotonic()
        results = list(drivers.map(one, rows))
        wall = time.monotonic() - t0
    ex.close()
    return summarise(results, wall, gs, tag, ex.build_workers)


def summarise(results: list[dict], wall: float, gs: GpuSampler, tag: str, build_workers: int) -> dict:
    def med(xs):
        xs = [x for x in xs if x is not None]
        return round(statistics.median(xs), 2) if xs else None

    parts = collections.defaultdict(list)
    for r in results:
        for k, v in {**(r.get("stage_seconds") or {}), **(r.get("detail_seconds") or {})}.items():
            parts[k].append(v)
    device_s = sum(r.get("device_s") or 0 for r in results)
    return {"tag": tag, "kernels": len(results), "wall_s": round(wall, 1),
            "verdicts_per_minute": round(len(results) / wall * 60, 2) if wall else None,
            "gpu_busy_nvidia_smi": gs.busy(), "gpu_busy_after_first_minute": gs.busy(60.0),
            "gpu_stage_time_over_wall": round(device_s / wall, 3) if wall else None,
            "build_workers": build_workers,
            "verdicts": dict(collections.Counter(r["verdict"] for r in results)),
            "split_path": sum(1 for r in results if r.get("build_path") == "split"),
            "median_build_s": med((r.get("stage_seconds") or {}).get("build") for r in results),
            "median_verdict_wall_s": med(r.get("wall_s") for r in results),
            "median_device_s": med(r.get("device_s") for r in results),
            "gpu_stage_parts_median_s": {k: med(v) for k, v in sorted(parts.items())},
            "gpu": next((r["gpu"] for r in results if r.get("gpu")), "")}


def table(out: Path) -> str:
    lines = []
    for path in sorted(out.glob("rows_*.jsonl")):
        tag = path.stem.removeprefix("rows_")
        rows = {}
        for l in path.read_text().splitlines():
            r = json.loads(l)
            rows[r["kernel"]] = r  # the last line of a kernel wins (a rerun)
        rows = sorted(rows.values(), key=lambda r: r["kernel"])
        ok = [r for r in rows if r["verdict"] == "correct"]
        lines += [f"## {tag}: {len(ok)}/{len(rows)} `correct` ({len(ok) / max(len(rows), 1):.1%}) of kernels "
                  "KernelBench judged correct", "", "| level | model | kernels | KForge correct |", "| --- | --- | --- | --- |"]
        by = collections.defaultdict(list)
        for r in rows:
            by[(r["level"], r["model"])].append(r)
        for (lv, model), rs in sorted(by.items()):
            lines.append(f"| {lv} | {model} | {len(rs)} | {sum(r['verdict'] == 'correct' for r in rs)} |")
        lines += ["", "| kernel | KForge verdict | reason (KForge's headline) | KernelBench speedup | KForge speedup |",
                  "| --- | --- | --- | --- | --- |"]
        for r in rows:
            if r["verdict"] != "correct" or r.get("flags"):
                why = (r.get("headline") or "").replace("|", "/").replace("\n", " ")[:240]
                if r["verdict"] == "correct":
                    why = "flagged: " + "; ".join(r["flags"])[:240].replace("|", "/")
                sp = r.get("speedup")
                lines.append(f"| {r['kernel']} | {r['verdict']} | {why} | {r['kernelbench_speedup']} | "
                             f"{'' if sp is None else f'{sp:.2f}'} |")
        lines.append("")
    text = "\n".join(lines)
    (out / "table.md").write_text(text)
    return text


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("out", type=Path)
    r.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent.parent / "shared" / "realworld")
    r.add_argument("--tag", default="after")
    r.add_argument("--only")
    r.add_argument("--sample", type=int)
    r.add_argument("--shard")
    r.add_argument("--build-workers", type=int)
    r.add_argument("--settings", default="{}", help="EvalSettings overrides as JSON (e.g. KernelBench's tolerance)")
    r.add_argument("--skip", type=Path, nargs="*", default=[], help="rows files whose kernels are done already")
    t = sub.add_parser("table")
    t.add_argument("out", type=Path)
    a = ap.parse_args(argv)
    if a.cmd == "table":
        print(table(a.out))
        return
    rows = pairs(a.root.resolve(), set(a.only.split(",")) if a.only else None, a.sample, a.shard, a.skip)
    summary = run(a.out, a.root.resolve(), a.tag, rows, a.build_workers, json.loads(a.settings))
    with (a.out / f"summary_{a.tag}.json").open("a") as f:
        f.write(json.dumps(summary) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0a")
    main()
