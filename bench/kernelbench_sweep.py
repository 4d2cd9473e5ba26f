"""KernelBench's own problem files at their published sizes, each evaluated with a trivial custom-kernel
candidate (the reference's computation, then a Triton copy kernel over every output), one evaluation at a
time per GPU: does the harness hold at real sizes, and is every failure the candidate's?

    python -m bench.kernelbench_sweep OUT --kernelbench ../shared/kernelbench --levels 1,2 --level3 10 \
        [--shard I/N]

Writes OUT/sweep_<shard>.jsonl (a line per problem: verdict, message, stage seconds, memory, eager time and
KernelBench's published H100 eager time). `--summarise OUT` merges the shards into OUT/summary.md.
Settings are EvalSettings() defaults except: strictness "lenient" (the candidate deliberately runs the
reference's own operators, which strict mode rejects as a PyTorch fallback) and no torch.compile timing.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

COPY_KERNEL = '''
import torch as _torch
import triton
import triton.language as tl


@triton.jit
def _kforge_copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


def _kforge_copy(t):
    if not isinstance(t, _torch.Tensor):
        return type(t)(_kforge_copy(x) for x in t)
    src = t.contiguous()
    out = _torch.empty_like(src)
    nbytes = src.numel() * src.element_size()
    if nbytes == 0:
        return out
    word = _torch.int32 if nbytes % 4 == 0 else _torch.uint8
    s, d = src.reshape(-1).view(_torch.uint8).view(word), out.reshape(-1).view(_torch.uint8).view(word)
    _kforge_copy_kernel[(triton.cdiv(s.numel(), 4096),)](s, d, s.numel(), BLOCK=4096)
    return out


class ModelNew(ReferenceComputation):
    def forward(self, *args):
        return _kforge_copy(super().forward(*args))
'''


def candidate_for(problem_source: str) -> str:
    """The problem's computation under another name (a candidate may not subclass the reference's Model),
    then the copy kernel over its outputs."""
    return re.sub(r"\bModel\b", "ReferenceComputation", problem_source) + "\n" + COPY_KERNEL


def problem_files(root: Path, levels: list[int], level3: int) -> list[tuple[str, Path]]:
    def key(p: Path):
        return int(p.name.split("_", 1)[0])

    out = []
    for level in levels:
        out += [(f"level{level}", p) for p in sorted((root / f"level{level}").glob("*.py"), key=key)]
    if level3:
        out += [("level3", p) for p in sorted((root / "level3").glob("*.py"), key=key)[:level3]]
    return out


def run(args) -> None:
    from kforge_core.evaluation import EvalSettings, evaluate
    from kforge_core.problems import load_problem_file

    root = Path(args.kernelbench)
    published = json.loads((root / "baseline_time_torch_H100.json").read_text())
    shard, n_shards = (int(x) for x in args.shard.split("/"))
    files = problem_files(root, [int(x) for x in args.levels.split(",") if x], args.level3)
    if args.skip_correct:  # problems an earlier sweep already found correct (a sweep split over calls)
        done = {(r["level"], r["problem"]) for line in Path(args.skip_correct).read_text().splitlines()
                for r in [json.loads(line)] if r["verdict"] == "correct"}
        files = [f for f in files if (f[0], f[1].name) not in done]
    if args.problems:
        wanted = set(args.problems.split(","))
        files = [f for f in files if f"{f[0]}/{f[1].name}" in wanted]
    files = files[shard::n_shards]
    settings = EvalSettings(strictness=args.strictness, compile_reference=False)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / f"sweep_{shard}.jsonl", "a") as f:
        for level, path in files:
            t0 = time.monotonic()
            row = {"level": level, "problem": path.name}
            try:
                problem = load_problem_file(path)
                r = evaluate(problem, candidate_for(problem.source), "triton", settings)
                eager = r.timings.get("eager")
                row.update(verdict=r.verdict.value, message=(r.messages or [""])[0][:400], flags=r.flags,
                           own_kernel_share=r.own_kernel_share, timing_notes=r.timing_notes,
                           stage_seconds=r.stage_seconds, memory=r.memory, gpu=r.environment.get("gpu"),
                           eager_ms=eager.median_ms if eager else None,
                           candidate_ms=r.timings["candidate"].median_ms if "candidate" in r.timings else None)
            except Exception as e:  # a problem file KForge cannot load at all is a finding too
                row.update(verdict="problem_error", message=f"{type(e).__name__}: {e}"[:400])
            pub = published.get(level, {}).get(path.name)
            row["published_eager_ms"] = pub["mean"] if pub else None
            row["wall_s"] = round(time.monotonic() - t0, 2)
            f.write(json.dumps(row) + "\n")
            f.flush()
            print(f"{level}/{path.name}: {row['verdict']} {row['wall_s']} s", flush=True)


def summarise(out: Path) -> str:
    rows = {}
    for p in sorted(out.glob("*.jsonl")):  # later files (a later call of a split sweep) win
        for line in p.read_text().splitlines():
            r = json.loads(line)
            rows[(r["level"], r["problem"])] = r
    rows = list(rows.values())
    rows.sort(key=lambda r: (r["level"], int(r["problem"].split("_", 1)[0])))
    gpus = Counter(r.get("gpu") for r in rows if r.get("gpu"))
    lines = [f"# KernelBench sweep: {len(rows)} problems on {', '.join(f'{g} ({n})' for g, n in gpus.items())}", "",
             "| verdict | count |", "| --- | --- |"]
    lines += [f"| {v} | {n} |" for v, n in Counter(r["verdict"] for r in rows).most_common()]
    ratios = [r["memory"]["evaluation_peak_mb"] / r["memory"]["reference_peak_mb"] for r in rows
              if r.get("memory", {}).get("reference_peak_mb", 0) > 64 and "evaluation_peak_mb" in r.get("memory", {})]
    if ratios:
        lines += ["", f"Evaluation peak / reference peak (device memory, problems whose reference peaks above 64 MiB, "
                      f"n={len(ratios)}): median {statistics.median(ratios):.2f}, max {max(ratios):.2f}"]
    off = [r for r in rows if r.get("eager_ms") and r.get("published_eager_ms")]
    if off:
        q = [r["eager_ms"] / r["published_eager_ms"] for r in off]
        lines += ["", f"Eager time / KernelBench's published H100 time (n={len(q)}): median {statistics.median(q):.2f}; "
                      f"off by more than 10 %: {sum(abs(x - 1) > 0.1 for x in q)}"]
    lines += ["", "| problem | verdict | eager ms | published ms | ratio | ref peak MiB | eval peak MiB | "
                  "build s | correctness s | timing s | message |", "| --- " * 11 + "|"]
    for r in rows:
        m, st = r.get("memory") or {}, r.get("stage_seconds") or {}
        ratio = r["eager_ms"] / r["published_eager_ms"] if r.get("eager_ms") and r.get("published_eager_ms") else None
        cells = [f"{r['level']}/{r['problem']}", r["verdict"], _f(r.get("eager_ms")), _f(r.get("published_eager_ms")),
                 _f(ratio), _f(m.get("reference_peak_mb")), _f(m.get("evaluation_peak_mb")), _f(st.get("build")),
                 _f(st.get("correctness")), _f(st.get("timing")),
                 "" if r["verdict"] == "correct" else r.get("message", "").replace("|", "/")[:160]]
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    (out / "summary.md").write_text(text)
    return text


def _f(x) -> str:
    return "—" if x is None else f"{x:.3g}" if isinstance(x, float) else str(x)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--kernelbench", default="../shared/kernelbench")
    ap.add_argument("--levels", default="1,2")
    ap.add_argument("--level3", type=int, default=10, help="how many level-3 problems (in file order)")
    ap.add_argument("--shard", default="0/1", help="I/N: every N-th problem from the I-th")
    ap.add_argument("--skip-correct", help="a sweep .jsonl: skip the problems it has as correct")
    ap.add_argument("--summarise", action="store_true")
    ap.add_argument("--problems", help="only these, comma-separated: level1/19_ReLU.py,...")
    ap.add_argument("--strictness", default="lenient")
    args = ap.parse_args(argv)
    if args.summarise:
        print(summarise(Path(args.out)))
    else:
        run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
