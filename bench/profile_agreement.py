"""Does the torch.profiler summary's GPU time per forward agree with the forward's wall time? (issue 16)

    python -m bench.profile_agreement OUT --kernelbench ../shared/kernelbench [--shard I/N] level1/19_ReLU.py ...

For each KernelBench problem at its real size, the sweep's candidate (the reference's computation, then a
Triton copy kernel over the outputs) and the reference are profiled (profiler_adapters.torch_profiler, the
app's own profile step). Per side: kernel time per forward (each GPU activity once) over the median wall time
of a forward measured outside the profiler. Where the GPU is the bottleneck the two should agree within 10 %.
Also prints the candidate's own-kernel share (the Triton copy kernel's part of its GPU time).
Writes OUT/profile_<shard>.jsonl.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv=None) -> int:
    from bench.kernelbench_sweep import candidate_for
    from kforge_core.evaluation import EvalSettings
    from kforge_core.problems import load_problem_file
    from profiler_adapters import torch_profiler

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--kernelbench", default="../shared/kernelbench")
    ap.add_argument("--shard", default="0/1")
    ap.add_argument("problems", nargs="+", help="levelN/FILE.py")
    a = ap.parse_args(argv)
    shard, n = (int(x) for x in a.shard.split("/"))
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / f"profile_{shard}.jsonl", "a") as f:
        for name in a.problems[shard::n]:
            row = {"problem": name}
            try:
                problem = load_problem_file(Path(a.kernelbench) / name)
                r = torch_profiler.profile(problem, candidate_for(problem.source), "triton",
                                           EvalSettings(strictness="lenient", compile_reference=False))
                m = {x.name: x.value for x in r.metrics}
                for side in ("reference", "candidate"):
                    wall, kern = m.get(f"{side}: forward wall time"), m.get(f"{side}: GPU kernel time per forward")
                    row[side] = {"wall_us": wall, "kernel_us": kern, "cpu_op_us": m.get(f"{side}: CPU operator time per forward"),
                                 "kernel_over_wall": round(kern / wall, 3) if wall and kern is not None else None}
                row["candidate_own_share_pct"] = m.get("candidate: own-kernel share of GPU time")
            except Exception as e:
                row["error"] = f"{type(e).__name__}: {e}"[:500]
            f.write(json.dumps(row) + "\n")
            f.flush()
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
