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
        assert c.tries and c.expect in {v.value for v in Verdict}, c.name


@pytest.mark.parametrize("case", CPU_CASES, ids=lambda c: c.name)
def test_adversarial_case_gets_declared_verdict(case):
    r = run_case(case)
    assert r.verdict.value == case.expect, (case.name, case.tries, r.verdict.value, r.messages)
    if case.message:
        assert any(case.message in m for m in r.messages), (case.name, r.messages)


def test_no_worker_survives_the_suite():
    left = subprocess.run(["pgrep", "-f", "kforge_core.evaluation.worker"], capture_output=True, text=True).stdout
    assert left.strip() == "", f"leftover worker processes: {left}"
    # spare workers may wait for the next job, but none may still be inside a job's folder
    spares = subprocess.run(["pgrep", "-f", "kforge_core.evaluation.spare"], capture_output=True, text=True).stdout
    for pid in spares.split():
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        assert "kforge-eval-" not in cwd, f"spare worker {pid} still in a job: {cwd}"
