"""The sandbox's limits with tiny stand-in workers (no torch, no compiles): fast and precise."""

import sys
import textwrap
import time
from pathlib import Path

from kforge_core.evaluation.isolation.sandbox import run_worker


ROOT = Path(__file__).resolve().parent.parent


def _fake_worker(tmp_path, body: str) -> str:
    mod = tmp_path / "fake_worker_mod.py"
    mod.write_text("import json, sys, os, time\nfrom pathlib import Path\n"
                   "log = open(Path(sys.argv[1]) / 'events.jsonl', 'a', buffering=1)\n"
                   "def stage(n): log.write(json.dumps({'stage': n}) + '\\n'); log.flush()\n"
                   + textwrap.dedent(body))
    sys.path.insert(0, str(tmp_path))
    return "fake_worker_mod"


def test_memory_watchdog_kills_a_growing_process_group(tmp_path):
    mod = _fake_worker(tmp_path, """
        stage('correctness')
        chunks = []
        while True:
            chunks.append(bytearray(50 << 20))  # touched: counts as resident
            time.sleep(0.01)
    """)
    jobdir = tmp_path / "job"
    jobdir.mkdir()
    o = run_worker(jobdir, {"PYTHONPATH": str(tmp_path)}, 60, 60, memory_limit_mb=400, module=mod)
    assert o.memory_exceeded_mb >= 400 and o.returncode is not None and o.returncode < 0
    assert o.last_stage == "correctness"


def test_run_deadline_starts_at_correctness_and_kills_children(tmp_path):
    mod = _fake_worker(tmp_path, """
        import subprocess
        stage('build'); time.sleep(1.0)
        stage('correctness')
        subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])  # a grandchild
        time.sleep(600)
    """)
    jobdir = tmp_path / "job"
    jobdir.mkdir()
    t0 = time.monotonic()
    o = run_worker(jobdir, {"PYTHONPATH": str(tmp_path)}, 30, 1.5, memory_limit_mb=4000, module=mod)
    took = time.monotonic() - t0
    assert o.timed_out == "correctness"
    assert 2.5 <= took < 6.0  # 1 s build + 1.5 s run limit + polling
    import subprocess
    left = subprocess.run(["pgrep", "-f", "time.sleep(600)"], capture_output=True, text=True).stdout
    assert left.strip() == "", "grandchild survived the group kill"


def test_stdout_tail_is_bounded(tmp_path):
    mod = _fake_worker(tmp_path, """
        stage('correctness')
        for i in range(200000):
            print('flood line', i)
    """)
    jobdir = tmp_path / "job"
    jobdir.mkdir()
    o = run_worker(jobdir, {"PYTHONPATH": str(tmp_path)}, 60, 60, memory_limit_mb=4000, module=mod)
    assert o.returncode == 0
    assert len(o.stdout_tail) < 4200 and "earlier bytes" in o.stdout_tail and "flood line 199999" in o.stdout_tail


def test_spare_worker_serves_the_next_evaluation(monkeypatch):
    """After one evaluation a spare worker (torch imported) waits; the next evaluation runs in it with the same
    verdict and timings of its own; with KFORGE_SPARE_WORKERS=0 every evaluation starts a fresh process."""
    from kforge_core.evaluation import EvalSettings, evaluate
    from kforge_core.evaluation.isolation.sandbox import SPARES
    from kforge_core.problems import resolve_problem

    problem = resolve_problem("level1/1_ReLU")
    src = (ROOT / "assets/examples/cpu/level1/1_ReLU.py").read_text()
    s = EvalSettings(compile_reference=False, threads=1)
    monkeypatch.setenv("KFORGE_SPARE_WORKERS", "1")
    evaluate(problem, src, "cpu", s)
    assert SPARES.wait_ready(120)  # a spare has done its imports
    assert all(p.poll() is None for procs in SPARES._spares.values() for p in procs)
    second = evaluate(problem, src, "cpu", s)
    assert second.correct and second.environment["spare_worker"] is True
    assert second.environment["threads"] == 1 and second.timings["candidate"].reps >= 10
    # a CPU-backend job keeps one spare (its imports must not share the cores with a timing)
    assert all(len(procs) <= 1 for procs in SPARES._spares.values())
    monkeypatch.setenv("KFORGE_SPARE_WORKERS", "0")
    third = evaluate(problem, src, "cpu", s)
    assert third.correct and third.environment["spare_worker"] is False


def test_gpu_jobs_keep_several_spares_and_start_the_next_when_one_is_taken(monkeypatch, tmp_path):
    """Back to back (a batch), a GPU spare's start took longer than the verdict it served: the next one must
    be starting while the current job runs. Checked with the key alone (no GPU needed: the spare waits)."""
    from kforge_core.evaluation.isolation import sandbox as S

    spares = S.SpareWorkers()
    env = {"CUDA_VISIBLE_DEVICES": "", S.spare.GPU_WORKER_VAR: "1"}
    module = "kforge_core.evaluation.worker.main"
    monkeypatch.setenv("KFORGE_SPARE_WORKERS", "1")
    try:
        spares.replenish(env, module)
        key = spares._key(env)
        assert len(spares._spares[key]) == S.GPU_SPARES
        assert spares.wait_ready(120)
        first = spares._spares[key][0]
        (tmp_path / "job").mkdir()
        taken = spares.take(tmp_path / "job", env, module)
        assert taken is first  # a ready one, the oldest
        assert len(spares._spares[key]) == S.GPU_SPARES and taken not in spares._spares[key]
    finally:
        for procs in spares._spares.values():
            for p in procs:
                S._kill_session(p.pid)
                p.wait()
        if "taken" in locals() and taken is not None:
            S._kill_session(taken.pid)
            taken.wait()
