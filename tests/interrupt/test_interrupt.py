"""Nothing a run wrote is ever lost: kill the process at every phase and after every artifact, resume, and
compare the round's files and rows before and after. Also a re-analysis cut short, in a thread and by a kill."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kforge_core import ASSETS_DIR
from kforge_core import artifacts as A
from kforge_core.llm.base import ImageData
from kforge_core.problems import resolve_problem
from kforge_core.runner import default_providers
from kforge_core.session import GateDecision, RunConfig, Session
from kforge_core.store import Store

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("driver.py")
PNG = (ASSETS_DIR / "screenshots" / "run_view.png").read_bytes()

KILL_POINTS = [f"phase:{p}" for p in ("generating", "evaluating", "evaluated", "profiling", "analysing", "done")] + [
    f"wrote:{f}" for f in (A.GENERATION_PROMPT, A.GENERATION_ANSWER, A.PROGRAM, A.GENERATION, A.EVAL, A.PROFILE,
                           A.ANALYSIS_PROMPT, A.ANALYSIS_ANSWER, A.RECOMMENDATION, A.ANALYSIS)]


def config(mode="gated", rounds=2) -> RunConfig:
    return RunConfig(problem=resolve_problem("level1/3_Softmax").to_dict(), backend="cpu",
                     provider={"kind": "scripted", "scripted_path": str(ASSETS_DIR / "demo/softmax_cpu_generation.json")},
                     analysis_provider={"kind": "scripted",
                                        "scripted_path": str(ASSETS_DIR / "demo/softmax_cpu_analysis.json")},
                     max_rounds=rounds, mode=mode, profiler="timings")


def drive(home: Path, run_id: str, point: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(DRIVER), str(home), run_id, point], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def files(store: Store, run_id: str) -> dict[str, str]:
    root = store.round_dir(run_id, None)
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*") if p.is_file() and not p.name.startswith(".")}


def rows(store: Store, run_id: str) -> dict[int, tuple]:
    return {r["idx"]: (r["verdict"], r["speedup"]) for r in store.rounds(run_id)}


def assert_nothing_lost(before_files, after_files, before_rows, after_rows):
    """Every file written before is still there with the same bytes: in place, or set aside (a step that
    was cut short and redone keeps its earlier files under interrupted/ or previous_analyses/)."""
    for path, digest in before_files.items():
        if after_files.get(path) == digest:
            continue
        name = Path(path).name
        kept = [p for p, d in after_files.items() if d == digest and Path(p).name == name
                and (A.INTERRUPTED in p or A.PREVIOUS_ANALYSES in p)]
        assert kept, f"{path} was lost or changed"
    for idx, (verdict, speedup) in before_rows.items():
        assert idx in after_rows, f"round {idx} row deleted"
        if verdict is not None:
            assert after_rows[idx] == (verdict, speedup), f"round {idx}: {after_rows[idx]} != {(verdict, speedup)}"


@pytest.mark.parametrize("point", KILL_POINTS)
def test_killed_at_any_point_resumes_without_losing_anything(tmp_path, point):
    store = Store(tmp_path)
    rid = Session.create(store, config(mode="auto", rounds=3))
    killed = drive(tmp_path, rid, point + "@2")  # round 1 completes; round 2 is killed at the point
    assert killed.returncode == -9, f"expected the driver to be killed at {point}: {killed.stdout} {killed.stderr}"
    before_files, before_rows = files(store, rid), rows(store, rid)
    assert before_rows.get(1) == ("correct", 2.0) and (point == "phase:generating" or 2 in before_rows)
    resumed = drive(tmp_path, rid, "none")
    assert resumed.returncode == 0, resumed.stderr
    assert_nothing_lost(before_files, files(store, rid), before_rows, rows(store, rid))
    # the run completed the round it was killed in and went on, as an uninterrupted run does
    assert [r["phase"] for r in store.rounds(rid)] == ["done"] * 3
    assert all(store.exists(rid, i, A.ANALYSIS) for i in (1, 2, 3))
    answers = [store.read_text(rid, i, A.GENERATION_ANSWER) for i in (1, 2, 3)]
    assert len(set(answers)) == 3, "a resumed run replayed or skipped a scripted answer"


def gated_run_at_gate(tmp_path) -> tuple[Store, str, Session]:
    store = Store(tmp_path)
    rid = Session.create(store, config(mode="gated", rounds=2))
    assert drive(tmp_path, rid, "none").stdout.strip() == "awaiting_gate"
    return store, rid, Session(store, rid, *default_providers(store)(store.config(rid), rid))


def test_reanalysis_then_run_keeps_the_round_and_its_screenshot(tmp_path):
    """The issue's API path: gate, add_screenshots, reanalyse, run() again: round 1 must stay as it was."""
    store, rid, s = gated_run_at_gate(tmp_path)
    s.add_screenshots(1, [ImageData(PNG, "image/png", "nsight")])
    before_files, before_rows = files(store, rid), rows(store, rid)
    s.reanalyse(1)
    assert store.rounds(rid)[0]["phase"] == "gate"
    assert s.run() == "awaiting_gate" and s.awaiting_gate() == 1
    after = files(store, rid)
    assert_nothing_lost(before_files, after, before_rows, rows(store, rid))
    assert any(p.startswith(f"round_001/{A.PREVIOUS_ANALYSES}/01/") for p in after)  # the earlier analysis kept
    assert store.images(rid, 1), "the screenshot is gone"
    assert store.best_kernel_source(rid)


class Interrupt(Exception):
    """Stands for Streamlit's rerun/stop exceptions, raised in the thread doing the work."""


def test_reanalysis_cut_short_in_its_thread_is_finished_on_resume(tmp_path):
    store, rid, s = gated_run_at_gate(tmp_path)
    s.add_screenshots(1, [ImageData(PNG, "image/png", "nsight")])
    before_files, before_rows = files(store, rid), rows(store, rid)

    def cut(messages):
        raise Interrupt("rerun")

    s.ana.provider._complete_once = cut
    with pytest.raises(Interrupt):
        s.reanalyse(1)
    assert store.rounds(rid)[0]["phase"] == "reanalysing"
    assert_nothing_lost(before_files, files(store, rid), before_rows, rows(store, rid))
    # a fresh process resumes: it finishes the analysis and waits at the same gate again
    assert drive(tmp_path, rid, "none").stdout.strip() == "awaiting_gate"
    assert store.exists(rid, 1, A.ANALYSIS) and store.exists(rid, 1, A.RECOMMENDATION)
    assert_nothing_lost(before_files, files(store, rid), before_rows, rows(store, rid))


def test_reanalysis_killed_in_a_process_is_finished_on_resume(tmp_path):
    store, rid, _ = gated_run_at_gate(tmp_path)
    # the driver's kill points cover the loop; here the kill lands inside reanalyse()
    helper = tmp_path / "reanalyse_and_die.py"
    helper.write_text(f"""
import sys
sys.path.insert(0, {str(ROOT)!r}); sys.path.insert(0, {str(DRIVER.parent)!r})
from driver import kill_at
from kforge_core.runner import default_providers
from kforge_core.session import Session
from kforge_core.store import Store
store = Store(sys.argv[1]); rid = sys.argv[2]
kill_at(store, "wrote:{A.ANALYSIS_ANSWER}")
Session(store, rid, *default_providers(store)(store.config(rid), rid)).reanalyse(1)
""")
    before_files, before_rows = files(store, rid), rows(store, rid)
    p = subprocess.run([sys.executable, str(helper), str(tmp_path), rid], capture_output=True, text=True, timeout=120)
    assert p.returncode == -9, p.stderr
    assert store.rounds(rid)[0]["phase"] == "reanalysing"
    assert drive(tmp_path, rid, "none").stdout.strip() == "awaiting_gate"
    assert_nothing_lost(before_files, files(store, rid), before_rows, rows(store, rid))
    assert store.exists(rid, 1, A.ANALYSIS)


def test_a_gate_decision_after_reanalysis_goes_on_to_round_2(tmp_path):
    store, rid, s = gated_run_at_gate(tmp_path)
    s.reanalyse(1)
    s.decide(1, GateDecision("accept"))
    assert drive(tmp_path, rid, "none").returncode == 0
    assert [r["idx"] for r in store.rounds(rid)] == [1, 2] and store.exists(rid, 2, A.EVAL)


def test_a_reanalysis_repeats_its_rounds_scripted_answer_and_later_rounds_keep_theirs(tmp_path):
    """A scripted analysis is a script of rounds: re-analysing round 1 must not use up round 2's answer."""
    script = json.loads((ASSETS_DIR / "demo/softmax_cpu_analysis.json").read_text())["answers"]
    store, rid, s = gated_run_at_gate(tmp_path)
    first = store.read_text(rid, 1, A.ANALYSIS_ANSWER)
    assert first == script[0]
    s.reanalyse(1)
    assert store.read_text(rid, 1, A.ANALYSIS_ANSWER) == first
    s.decide(1, GateDecision("accept"))
    assert drive(tmp_path, rid, "none").stdout.strip() == "finished"  # round 2 is the last
    assert store.read_text(rid, 2, A.ANALYSIS_ANSWER) == script[1]
