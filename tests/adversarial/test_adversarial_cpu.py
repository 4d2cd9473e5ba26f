"""Every CPU-applicable adversarial candidate gets its declared verdict, and the test process survives."""

import os
import subprocess

import pytest

from kforge_core.evaluation import Verdict
from runner import CASES, read_case, run_case

CPU_CASES = [c for c in map(read_case, CASES) if c.backend == "cpu"]


def test_suite_is_large_and_documented():
    cases = [read_case(p) for p in CASES]
    assert len(cases) >= 30
    for c in cases:
        assert c.tries and c.expected <= {v.value for v in Verdict}, c.name


@pytest.mark.parametrize("case", CPU_CASES, ids=lambda c: c.name)
def test_adversarial_case_gets_declared_verdict(case):
    r = run_case(case)
    assert r.verdict.value in case.expected, (case.name, case.tries, r.verdict.value, r.messages)
    if case.message_due(r.verdict.value):
        assert any(case.message in m for m in r.messages), (case.name, r.messages)


def suite_processes(pattern: str) -> list[str]:
    """PIDs matching `pattern` that this test session started: they carry its own build cache folder in their
    environment (conftest sets KFORGE_CACHE_DIR), so another KForge running on the machine is not counted."""
    mine = f"KFORGE_CACHE_DIR={os.environ['KFORGE_CACHE_DIR']}".encode()
    pids = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()
    own = []
    for pid in pids:
        try:
            if mine in open(f"/proc/{pid}/environ", "rb").read().split(b"\0"):
                own.append(pid)
        except OSError:
            continue  # gone, or not ours to read
    return own


def test_no_worker_survives_the_suite():
    left = suite_processes("kforge_core.evaluation.worker.main")
    assert not left, f"leftover worker processes: {left}"
    # spare workers may wait for the next job, but none may still be inside a job's folder
    for pid in suite_processes("kforge_core.evaluation.isolation.spare"):
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        assert "kforge-eval-" not in cwd, f"spare worker {pid} still in a job: {cwd}"
