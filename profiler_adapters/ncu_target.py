"""The process ncu profiles: builds the candidate like the evaluation worker does, warms it up, then runs
one forward pass inside the NVTX range "kforge_candidate" (ncu profiles only the kernels launched there).

    python -m profiler_adapters.ncu_target JOBDIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

RANGE = "kforge_candidate"


def main() -> int:
    import torch

    from kforge_core.evaluation.worker.loading import seeded, to_device
    from kforge_core.evaluation.worker.stages import Evaluation
    from kforge_core.evaluation.worker.main import EventLog

    jobdir = Path(sys.argv[1])
    job = json.loads((jobdir / "job.json").read_text())
    ev = Evaluation(job, jobdir, EventLog(jobdir / "events.jsonl"))
    ref = ev.load_problem()
    model_new = ev.build()
    seed = ev.settings.seed
    init, inputs = ev.make_case(ref, seed)
    device = torch.device(ev.backend.device())
    model = seeded(seed, lambda: model_new(*init)).to(device)
    inputs = to_device(inputs, device)
    for _ in range(3):  # warm-up: lazy init, autotuning and caches stay out of the profiled range
        model(*inputs)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(RANGE)
    model(*inputs)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
