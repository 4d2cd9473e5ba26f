"""In-process loading of a (trusted) candidate for benchmarks that time it with other tools."""

from __future__ import annotations

import torch

from kforge_core.evaluation.worker import _seeded, _to_device, load_source_module
from kforge_core.problems import Problem


def load_candidate(problem: Problem, source: str, device: str = "cuda", seed: int = 1042):
    ref = load_source_module(problem.source, problem.path, "bench_reference", register=False)
    mod = load_source_module(source, "candidate.py", "bench_candidate")
    init = _seeded(seed, ref.get_init_inputs)
    inputs = _to_device(_seeded(seed, ref.get_inputs), torch.device(device))
    model = _seeded(seed, lambda: mod.ModelNew(*init)).to(device)
    return model, inputs
