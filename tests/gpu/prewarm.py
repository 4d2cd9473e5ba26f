"""Build every CUDA/Triton source the GPU tests use, all at once (timing off), so that the tests, run one
per GPU afterwards, find them in the build cache: a device call then spends its minutes on verdicts.

    KFORGE_CACHE_DIR=... python tests/gpu/prewarm.py
"""

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent / "adversarial"), str(HERE.parent.parent)]

from runner import CASES, candidate_source, problem_of, read_case  # noqa: E402
from test_honest_examples import CASES as HONEST, HERE as HONEST_DIR, SHIPPED  # noqa: E402

from kforge_core.backends import get_backend  # noqa: E402
from kforge_core.evaluation import EvalSettings, evaluate  # noqa: E402
from kforge_core.problems import resolve_problem  # noqa: E402

jobs = [(p, (HONEST_DIR / n).read_text(), b) for n, p, b in HONEST]
jobs += [(resolve_problem(n), get_backend(b).example_for(n).read_text(), b) for b, n in SHIPPED]
for c in map(read_case, CASES):
    if c.backend == "cuda" and c.preamble and not c.name.startswith("39_"):
        jobs.append((problem_of(c), candidate_source(c), "cuda"))
quick = EvalSettings(timing=False, strictness="off", compile_reference=False)
with ThreadPoolExecutor(16) as pool:
    for (p, _, b), r in zip(jobs, pool.map(lambda j: evaluate(j[0], j[1], j[2], quick), jobs)):
        print(f"prewarm {b} {p.name}: {r.verdict.value} {r.stage_seconds.get('build', 0):.1f} s build", flush=True)
