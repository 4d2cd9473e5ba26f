"""Batch mode: `kforge bench` on the local process pool and on a local Ray instance, resume after a crash,
executors' device placement, the shared rate limiter, problem-set selection."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kforge_core.bench import BenchRunner, BenchSpec, bench_outcomes, create_bench, problem_set
from kforge_core.executors import PoolExecutor
from kforge_core.llm.ratelimit import RateLimiter
from kforge_core.metrics import fast_p_table
from kforge_core.runner import default_providers
from kforge_core.store import Store

ROOT = Path(__file__).resolve().parent.parent
SMOKE = ROOT / "assets" / "bench" / "cpu_smoke"
FOUR = "1_ReLU,3_Softmax,7_GELU,5_Scale_Residual_Add_Clamp"
EXPECTED_VERDICTS = {"level1/1_ReLU": "compile_error", "level1/3_Softmax": "correct", "level1/7_GELU": "correct",
                     "level2/5_Scale_Residual_Add_Clamp": "runtime_error"}


def kforge(*args, timeout=1200):
    return subprocess.run([sys.executable, "-m", "kforge_core", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


def bench_tables(home: Path) -> tuple[str, dict, dict]:
    store = Store(home)
    (bench,) = store.benches()
    outcomes = bench_outcomes(store, bench["id"])
    return fast_p_table(outcomes), {o.problem: o.verdict for o in outcomes}, bench


def test_bench_on_local_pool_and_on_ray_gives_identical_tables(tmp_path):
    pytest.importorskip("ray", reason="ray is in requirements-dev.txt")
    common = ["bench", "--only", FOUR, "--backend", "cpu", "--scripted", str(SMOKE), "--rounds", "2",
              "--no-compile"]
    pool = kforge(*common, "--home", str(tmp_path / "pool"), "--out", str(tmp_path / "pool_out"))
    assert pool.returncode == 0, pool.stderr[-3000:]
    ray = kforge(*common, "--ray", "local", "--home", str(tmp_path / "ray"), "--out", str(tmp_path / "ray_out"))
    assert ray.returncode == 0, ray.stderr[-3000:]
    print(pool.stdout, ray.stdout, sep="\n")

    pool_table, pool_verdicts, pool_bench = bench_tables(tmp_path / "pool")
    ray_table, ray_verdicts, ray_bench = bench_tables(tmp_path / "ray")
    assert "local process pool" in pool_bench["note"] and "Ray cluster: 1 node(s)" in ray_bench["note"]
    assert pool_verdicts == ray_verdicts == EXPECTED_VERDICTS
    assert pool_table == ray_table
    assert "| eager | 50.0% | 0.0% | 0.0% | 0.0% |" in pool_table  # the two correct kernels are slower than eager
    assert "| compiled | 50.0% | n/a | n/a | n/a |" in pool_table  # --no-compile: not timed against it
    # the printed report and the exported files hold the same table, and the CSV a row per item
    assert pool_table in pool.stdout and pool_table in (tmp_path / "pool_out" / "summary.md").read_text()
    csv_rows = (tmp_path / "ray_out" / "per_problem.csv").read_text().splitlines()
    assert len(csv_rows) == 5 and csv_rows[0].startswith("problem,sample,verdict")
    # every round of every item is in the store, with the prompts and answers of the scripted provider
    store = Store(tmp_path / "ray")
    for item in store.bench_items(ray_bench["id"]):
        assert item["status"] == "finished" and item["rounds_done"] == 2
        assert store.read_text(item["run_id"], 2, "generation_answer.txt")


def test_bench_resumes_after_the_process_is_killed(tmp_path):
    """SIGKILL `kforge bench` while it works on its second item; --resume runs only what is unfinished."""
    scripts = tmp_path / "scripts"
    softmax = (ROOT / "assets/examples/cpu/level1/3_Softmax.py").read_text()
    (scripts / "level1").mkdir(parents=True)
    (scripts / "level1" / "1_ReLU.json").write_text(json.dumps({"generation": ["no program here, sorry"]}))
    # a candidate that takes a while to evaluate (a fresh build), so the kill lands in the middle of it
    slow = softmax.replace('name="kforge_example_softmax"', 'name="kforge_resume_softmax"')
    assert slow != softmax
    (scripts / "level1" / "2_Sum_reduction_over_a_dimension.json").write_text(json.dumps(
        {"generation": ["nope"]}))
    (scripts / "level1" / "3_Softmax.json").write_text(json.dumps({"generation": ["```python\n" + slow + "```"]}))
    home = tmp_path / "home"
    cmd = [sys.executable, "-m", "kforge_core", "bench", "--only", "1_ReLU,2_Sum_reduction_over_a_dimension,3_Softmax",
           "--backend", "cpu", "--scripted", str(scripts), "--rounds", "1", "--no-compile", "--profiler", "none",
           "--concurrency", "1", "--home", str(home)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 300
    store, evaluating = None, None
    while time.monotonic() < deadline and evaluating is None:
        time.sleep(0.2)
        if (home / "index.sqlite").exists():
            store = Store(home)
            benches = store.benches()
            if benches:
                for i in store.bench_items(benches[0]["id"]):
                    phases = [r["phase"] for r in store.rounds(i["run_id"])]
                    if i["problem"] == "level1/3_Softmax" and "evaluating" in phases:
                        evaluating = i
    assert evaluating, "the bench never reached the third item's evaluation"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    bench_id = store.benches()[0]["id"]
    before = {i["problem"]: i for i in store.bench_items(bench_id)}
    assert before["level1/1_ReLU"]["status"] == "finished"
    assert before["level1/3_Softmax"]["status"] == "running"  # what the dead process left
    done_files = {p: p.stat().st_mtime_ns for p in (home / "runs" / before["level1/1_ReLU"]["run_id"]).rglob("*")}

    r = kforge("bench", "--resume", bench_id, "--home", str(home))
    assert r.returncode == 0, r.stderr[-3000:]
    after = {i["problem"]: i for i in store.bench_items(bench_id)}
    assert all(i["status"] == "finished" for i in after.values())
    assert {p: p.stat().st_mtime_ns for p in done_files} == done_files  # the finished item was not touched
    assert [x["verdict"] for x in store.rounds(after["level1/3_Softmax"]["run_id"])] == ["correct"]
    assert "| eager | 33.3% |" in r.stdout and "| level1/1_ReLU | 0 | generation_failure | 1 |" in r.stdout


def _env(name):
    time.sleep(0.5)  # both device workers must be busy at once
    return os.environ.get(name)


def test_pool_gives_each_device_worker_one_gpu_and_builds_none():
    ex = PoolExecutor(["3", "5"], build_workers=1)
    try:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(2) as t:
            seen = set(t.map(lambda _: ex.on_device(_env, "CUDA_VISIBLE_DEVICES"), range(2)))
        assert seen == {"3", "5"}
        assert ex.on_cpu(_env, "CUDA_VISIBLE_DEVICES") == ""
        assert ex.split_build and "GPU 3, GPU 5" in ex.describe()
    finally:
        ex.close()
    cpu = PoolExecutor.for_backend("cpu")
    try:
        assert not cpu.split_build and cpu.describe().endswith("1 CPU evaluation slot")
    finally:
        cpu.close()


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t

    def sleep(self, s):
        self.t += s


def test_rate_limiter_spaces_requests_to_the_per_minute_rate():
    clock = FakeClock()
    lim = RateLimiter(per_minute=3, clock=clock, sleep=clock.sleep)
    starts = []
    for _ in range(7):
        lim.run(lambda: starts.append(clock()))
    assert starts == [0, 0, 0, 60, 60, 60, 120]
    assert lim.waited_s == pytest.approx(120)


def test_rate_limiter_bounds_requests_in_flight():
    import threading

    lim = RateLimiter(max_concurrent=2)
    live, peak, lock = [0], [0], threading.Lock()

    def call():
        with lock:
            live[0] += 1
            peak[0] = max(peak[0], live[0])
        time.sleep(0.05)
        with lock:
            live[0] -= 1

    threads = [threading.Thread(target=lim.run, args=(call,)) for _ in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert peak[0] == 2


def test_problem_set_selection(tmp_path):
    problems, errors, desc = problem_set("builtin", level=2)
    assert len(problems) == 5 and all(p.name.startswith("level2/") for p in problems) and not errors
    problems, errors, _ = problem_set("builtin", only=["1_ReLU", "nope"], limit=5)
    assert [p.name for p in problems] == ["level1/1_ReLU"] and "nope: not in the problem set" in str(errors[0])
    kb = tmp_path / "KernelBench"
    (kb / "level1").mkdir(parents=True)
    (kb / "level1" / "1_ReLU.py").write_text((ROOT / "assets/problems/level1/1_ReLU.py").read_text())
    (kb / "level1" / "2_broken.py").write_text("def get_inputs(:\n")
    problems, errors, desc = problem_set(str(kb), level=1)
    assert [p.name for p in problems] == ["level1/1_ReLU"] and "2_broken.py" in str(errors[0])
    assert desc.endswith("level1")


def test_bench_items_failing_to_build_providers_fail_alone(tmp_path):
    """An item whose provider cannot be built (here: no script for the problem) fails with the reason; the
    other items still run."""
    store = Store(tmp_path)
    problems, _, _ = problem_set("builtin", only=["1_ReLU", "7_GELU"])
    scripts = tmp_path / "scripts" / "level1"
    scripts.mkdir(parents=True)
    (scripts / "1_ReLU.json").write_text(json.dumps({"generation": ["no code"]}))
    spec = BenchSpec("t", "cpu", {"kind": "scripted", "scripted_path": str(tmp_path / "scripts")}, "test",
                     rounds=1, profiler="none", eval_settings={"compile_reference": False})
    bench_id = create_bench(store, spec, problems)
    seen = []
    runner = BenchRunner(store, bench_id, PoolExecutor.for_backend("cpu"), default_providers(store),
                         on_progress=seen.append)
    try:
        assert runner.run() == "finished"
    finally:
        runner.executor.close()
    items = {i["problem"]: i for i in store.bench_items(bench_id)}
    assert items["level1/1_ReLU"]["status"] == "finished"
    assert items["level1/7_GELU"]["status"] == "failed" and "7_GELU.json" in items["level1/7_GELU"]["note"]
    assert [p.done for p in seen] == [1, 2] and seen[-1].total == 2
    assert runner.pending() == [] and len(runner.pending(retry_failed=True)) == 1
