"""The harness at real sizes, scaled to a CPU: its memory stays proportional to the problem, its own faults
are harness_error (never the candidate's verdict), outputs are validated before anything reads them, and
`kforge check` reports a folder against a baseline."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from kforge_core.evaluation import EvalSettings, Verdict
from kforge_core.evaluation.judging.correctness import compare, validate_output
from kforge_core.evaluation.evaluator import _result_from_outcome
from kforge_core.evaluation.judging.fingerprint import fingerprint
from kforge_core.evaluation.isolation.sandbox import ChildOutcome
from kforge_core.evaluation.worker.stages import Evaluation
from kforge_core.evaluation.worker.main import EventLog
from kforge_core.backends import get_backend
from kforge_core.problems import problem_from_source, resolve_problem

ROOT = Path(__file__).resolve().parents[1]
N = 1 << 26  # 64 Mi floats: 256 MiB per tensor, large enough that a harness copy shows in the peak RSS

BIG_RELU = f'''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)

def get_inputs():
    return [torch.randn({N})]

def get_init_inputs():
    return []
'''
PLAIN_CANDIDATE = '''
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
'''


def make_job(tmp_path, problem, candidate, **settings) -> Path:
    jobdir = tmp_path / "job"
    jobdir.mkdir()
    (jobdir / "candidate.py").write_text(candidate)
    s = EvalSettings(strictness="lenient", timing=False, **settings)
    (jobdir / "job.json").write_text(json.dumps({"problem": problem.to_dict(), "backend": "cpu",
                                                 "settings": s.to_dict(), "address_space_limit": False}))
    return jobdir


def probe(mode: str, jobdir: Path) -> float:
    out = subprocess.run([sys.executable, str(ROOT / "tests/harness_memory_probe.py"), mode, str(jobdir)],
                         capture_output=True, text=True, timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])["growth_mib"]


def test_correctness_memory_stays_within_twice_the_references_extra(tmp_path):
    """The reference alone peaks at its input + output (~512 MiB here); the whole correctness stage (3
    trials, candidate and reference side by side, mutation / alias / constant-output checks, comparison)
    must stay under 3x that, i.e. the harness adds at most 2x the reference's own footprint. Before this
    change it kept an input snapshot, a clone, two output snapshots and float64 comparison temporaries."""
    problem = problem_from_source(BIG_RELU, "big_relu")
    jobdir = make_job(tmp_path, problem, PLAIN_CANDIDATE, error_model="fixed")
    reference = probe("reference", jobdir)
    whole = probe("correctness", jobdir)
    assert reference > 400, f"the probe did not see the reference's own memory ({reference:.0f} MiB)"
    assert whole <= 3 * reference, f"correctness peaked at {whole:.0f} MiB vs the reference's {reference:.0f} MiB"
    # The error model's float64 run of the reference adds its own widened inputs and outputs (2x the
    # reference's footprint) and no more: it is made, judged and freed before anything else is allocated.
    (tmp_path / "job").rename(tmp_path / "job_fixed")
    with_float64 = probe("correctness", make_job(tmp_path, problem, PLAIN_CANDIDATE))
    assert with_float64 <= 5 * reference, f"with the float64 reference: {with_float64:.0f} MiB vs {reference:.0f} MiB"


def in_process_evaluation(tmp_path, candidate: str) -> Evaluation:
    problem = resolve_problem("level1/1_ReLU")
    jobdir = make_job(tmp_path, problem, candidate, n_trials=1)
    return Evaluation(json.loads((jobdir / "job.json").read_text()), jobdir, EventLog(jobdir / "events.jsonl"))


def test_an_exception_in_a_harness_check_is_a_harness_error(tmp_path, monkeypatch):
    import kforge_core.evaluation.judging.correctness as C

    def broken_compare(*a, **k):
        raise RuntimeError("injected fault in the comparison")

    monkeypatch.setattr(C, "compare", broken_compare)
    result = in_process_evaluation(tmp_path, PLAIN_CANDIDATE).run()
    assert result["verdict"] == "harness_error"
    assert "during correctness" in result["messages"][0] and "injected fault" in result["messages"][0]
    assert "broken_compare" in result["messages"][1]  # the traceback's tail names the failing code


def test_candidates_own_exception_stays_a_runtime_error(tmp_path):
    cand = PLAIN_CANDIDATE.replace("return torch.relu(x)", "raise ValueError('my bug')")
    result = in_process_evaluation(tmp_path, cand).run()
    assert result["verdict"] == "runtime_error" and "my bug" in result["messages"][0]


def test_a_tensor_subclass_output_is_rejected_before_anything_reads_it(tmp_path):
    cand = PLAIN_CANDIDATE.replace("class ModelNew", "class Sneaky(torch.Tensor):\n    pass\n\nclass ModelNew").replace(
        "return torch.relu(x)", "return torch.relu(x).as_subclass(Sneaky)")
    result = in_process_evaluation(tmp_path, cand).run()
    assert result["verdict"] == "rejected"
    assert "Sneaky" in result["messages"][0] and "plain torch.Tensor" in result["messages"][0]


def test_validate_output_names_what_was_returned():
    t = torch.ones(2)
    assert validate_output([t, (t, t)]) is None
    assert "list" not in (validate_output([t, 3]) or "") and "int" in validate_output([t, 3])
    assert "Parameter" in validate_output(torch.nn.Parameter(t))
    assert "expected cuda" in validate_output(t, torch.device("cuda"))


def death(region: str, returncode: int = -11) -> ChildOutcome:
    events = [{"stage": "start"}, {"region": "harness"}, {"stage": "correctness"}, {"region": region}]
    return ChildOutcome(returncode, events, stderr_tail="Traceback ...\nRuntimeError: boom in harness")


def test_a_worker_dying_in_harness_code_is_a_harness_error_with_stderr():
    problem, backend, s = resolve_problem("level1/1_ReLU"), get_backend("cpu"), EvalSettings()
    r = _result_from_outcome(death("harness"), problem, backend, s)
    assert r.verdict == Verdict.HARNESS_ERROR and "boom in harness" in " ".join(r.messages)
    r = _result_from_outcome(death("candidate"), problem, backend, s)
    assert r.verdict == Verdict.RUNTIME_ERROR and "SIGSEGV" in r.messages[0] and "boom" in " ".join(r.messages)
    r = _result_from_outcome(death("harness", returncode=1), problem, backend, s)
    assert r.verdict == Verdict.HARNESS_ERROR and "without a result" in r.messages[0]
    assert not Verdict.HARNESS_ERROR.candidates_fault and Verdict.REJECTED.candidates_fault


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64,
                                   torch.bool, torch.complex64])
def test_chunked_compare_and_fingerprints_agree_with_the_plain_definitions(dtype, monkeypatch):
    import kforge_core.evaluation.judging.correctness as C

    monkeypatch.setattr(C, "CHUNK", 1000)  # many chunks
    g = torch.Generator().manual_seed(0)
    r = (torch.randn(37, 111, generator=g) * 10).to(dtype)
    c = r.clone()
    assert compare(r, c, {}).passed
    flat = c.view(-1)
    flat[2500] = flat[2500] + (1 if dtype != torch.bool else True) if dtype != torch.bool else ~flat[2500]
    res = compare(r, c, {"float32": (1e-3, 1e-3)})
    assert not res.passed and res.mismatch_fraction == pytest.approx(1 / r.numel())
    assert "[22, 58]" in res.worst  # 2500 = 22 * 111 + 58
    assert fingerprint(r) != fingerprint(c) and fingerprint(r) == fingerprint(r.clone())


def test_kforge_check_on_a_folder_with_a_baseline(tmp_path, capsys):
    from kforge_core.cli import main

    folder = tmp_path / "set" / "level1"
    folder.mkdir(parents=True)
    for name in ("1_ReLU", "3_Softmax"):
        (folder / f"{name}.py").write_text(resolve_problem(f"level1/{name}").source)
    (folder / "9_Broken.py").write_text("def get_inputs(:\n")
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"level1": {"1_ReLU.py": {"mean": 0.05}, "3_Softmax.py": {"mean": 0.2}}}))
    code = main(["check", str(tmp_path / "set"), "--backend", "cpu", "--baseline", str(baseline),
                 "--out", str(tmp_path / "out"), "--no-compile"])
    assert code == 1  # one broken file
    rows = {r["problem"]: r for r in __import__("csv").DictReader(open(tmp_path / "out" / "check.csv"))}
    assert rows["level1/1_ReLU"]["status"] == "ok" and float(rows["level1/1_ReLU"]["eager_ms"]) > 0
    ratio = float(rows["level1/1_ReLU"]["eager_vs_baseline"])
    assert ratio == pytest.approx(float(rows["level1/1_ReLU"]["eager_ms"]) / 0.05)
    assert rows["9_Broken"]["status"] == "problem_error"
    assert "1 of 3" not in (tmp_path / "out" / "check.md").read_text()
    assert "2 of 3 references run" in (tmp_path / "out" / "check.md").read_text()


def test_a_worker_may_lengthen_its_run_deadline_for_a_large_problem_but_never_shorten_it(tmp_path):
    """The fit check asks for more time on problems whose inputs take seconds to make; the sandbox grants it
    (and only ever more than the configured limit)."""
    from kforge_core.evaluation.isolation.sandbox import run_worker

    script = ("import json, sys, time\n"
              "log = open(sys.argv[1] + '/events.jsonl', 'a', buffering=1)\n"
              "log.write(json.dumps({'run_timeout_s': float(sys.argv[2])}) + '\\n')\n"
              "log.write(json.dumps({'stage': 'correctness'}) + '\\n')\n"
              "time.sleep(3)\n"
              "log.write(json.dumps({'result': {'ok': True}}) + '\\n')\n")
    (tmp_path / "fake_worker.py").write_text(script)
    for asked, survives in ((10.0, True), (0.1, False)):
        jobdir = tmp_path / f"job{asked}"
        jobdir.mkdir()
        # run_worker runs `python -m MODULE JOBDIR`: a module on PYTHONPATH that takes the asked time as argv[2]
        (tmp_path / f"fake_{int(asked * 10)}.py").write_text(
            f"import sys; sys.argv.append({str(asked)!r}); exec(open({str(tmp_path / 'fake_worker.py')!r}).read())")
        o = run_worker(jobdir, {"PYTHONPATH": str(tmp_path), "KFORGE_SPARE_WORKERS": "0"}, 60, 1.0, 4096,
                       module=f"fake_{int(asked * 10)}")
        assert (o.final("result") is not None) == survives, (asked, o.timed_out, o.stderr_tail)
        assert bool(o.timed_out) != survives
