"""In-process loading of a (trusted) candidate for benchmarks that time it with other tools."""

from __future__ import annotations

import torch

from kforge_core.evaluation.worker.loading import load_source_module, seeded, to_device
from kforge_core.problems import Problem


def load_candidate(problem: Problem, source: str, device: str = "cuda", seed: int = 1042):
    ref = load_source_module(problem.source, problem.path, "bench_reference", register=False)
    mod = load_source_module(source, "candidate.py", "bench_candidate")
    init = seeded(seed, ref.get_init_inputs)
    inputs = to_device(seeded(seed, ref.get_inputs), torch.device(device))
    model = seeded(seed, lambda: mod.ModelNew(*init)).to(device)
    return model, inputs
