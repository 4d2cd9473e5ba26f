"""streamlit.testing AppTest over every page, and a full gated scripted run on the CPU backend in which the
test edits the recommendation and finds the edit in the next generation prompt."""

import json
import re
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from kforge_core.store import Store

APP = str(Path(__file__).resolve().parents[2] / "app.py")
PAGES = ["pages/new_run.py", "pages/run_view.py", "pages/runs.py", "pages/bench.py", "pages/evaluate.py",
         "pages/problems.py", "pages/settings.py"]


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("KFORGE_HOME", str(tmp_path / "kforge_home"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    return tmp_path / "kforge_home"


def app(page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def wait_for(predicate, at: AppTest, timeout: float = 400.0):
    """Poll the store (the run works in a background thread), then show the run view."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if predicate():
            at.switch_page("pages/run_view.py").run()
            return
        time.sleep(1.0)
    raise AssertionError("timed out waiting for the run")


def button(at: AppTest, label: str):
    return next(b for b in at.button if b.label == label)


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_with_no_key_and_no_runs(home, page):
    at = app(page)
    assert at.title and at.title[0].value
    if page == "pages/new_run.py":
        assert any(b.label == "Start the scripted demo" for b in at.button)
        labels = " ".join(at.selectbox(key="new_backend").options)
        assert "metal — unavailable:" in labels  # unavailable backends are shown with the reason
    if page == "pages/settings.py":
        assert any("OPENAI_API_KEY: not set" in t.value for t in at.text)


def test_problems_page_switches_level(home):
    at = app("pages/problems.py")
    at.radio[0].set_value(3).run()
    assert any("level3/3_TransformerBlock" in e.label for e in at.expander)


def test_evaluate_page_runs_the_shipped_example(home):
    at = app("pages/evaluate.py")
    at.selectbox(key="eval_problem").set_value("level1/1_ReLU").run()
    assert "relu_forward" in at.text_area(key="candidate_src").value
    button(at, "Evaluate").click().run()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not any("Verdict:" in s.value for s in list(at.success) + list(at.error)):
        time.sleep(1.0)
        at.run()
    assert any("Verdict: correct" in s.value for s in at.success)


def test_new_run_reports_a_broken_pasted_problem(home):
    at = app("pages/new_run.py")
    at.radio(key="problem_source").set_value("Paste").run()
    at.text_area(key="problem_paste").set_value("class Model(:\n").run()
    assert any("syntax error" in e.value for e in at.error)
    assert button(at, "Start run").disabled


def test_gated_scripted_run_with_an_edited_recommendation(home):
    at = app("pages/new_run.py")
    button(at, "Start the scripted demo").click().run()
    store = Store(home)
    run_id = store.runs()[0]["id"]
    wait_for(lambda: store.run(run_id)["status"] == "awaiting_gate", at)
    assert not at.exception, [e.value for e in at.exception]
    assert any("Use float math and every core" in t.value for t in at.text)  # the agent's recommendation
    assert any(s.value.startswith("correct") for s in at.success)

    at.text_input(key="rec_title_1").set_value("Use 64-wide row tiles (EDITED BY TEST)")
    at.text_area(key="rec_change_1").set_value("Process each row in 64-element tiles kept in registers.")
    button(at, "Continue with my recommendation").click().run()
    wait_for(lambda: store.run(run_id)["status"] == "awaiting_gate" and len(store.rounds(run_id)) == 2, at)

    prompt = store.read_json(run_id, 2, "generation_prompt.json")[-1]["text"]  # artifacts carry a format field
    assert "Use 64-wide row tiles (EDITED BY TEST)" in prompt
    assert "Process each row in 64-element tiles kept in registers." in prompt
    assert "Use float math and every core" not in prompt  # the edit replaced the agent's recommendation
    # the run view shows that prompt too
    assert any("EDITED BY TEST" in c.value for c in at.code)
    gate1 = json.loads((store.round_dir(run_id, 1) / "gate.json").read_text())
    assert gate1["action"] == "edit_recommendation"

    button(at, "Stop the run").click().run()
    assert store.run(run_id)["status"] == "stopped"

    runs = app("pages/runs.py")
    assert run_id in runs.dataframe[0].value["run"].tolist()


def test_bench_page_runs_a_scripted_bench_and_shows_fast_p(home):
    at = app("pages/bench.py")
    at.multiselect(key="bench_problems").set_value(["level1/1_ReLU", "level1/3_Softmax"])
    at.number_input[1].set_value(1)  # rounds
    button(at, "Start bench").click().run()
    assert not at.exception, [e.value for e in at.exception]
    store = Store(home)
    (bench,) = store.benches()
    t0 = time.monotonic()
    while store.bench(bench["id"])["status"] == "running" and time.monotonic() - t0 < 600:
        time.sleep(1.0)
    assert store.bench(bench["id"])["status"] == "finished"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    text = " ".join(m.value for m in at.markdown)
    # Softmax correct (and slower), ReLU wrong: fast_0 is 50 %; above 0 a speedup counts only unflagged, and on
    # a loaded machine the timing is flagged "unstable" (then n/a): what holds on any machine is one or the other
    assert re.search(r"\| eager \| 50\.0% \|(?: (?:0\.0%|n/a) \|){3}", text), text
    table = at.dataframe[0].value
    assert sorted(table["verdict"]) == ["correct", "numerical_mismatch"]
    assert len(at.get("plotly_chart")) == 2  # fast_p over p, speedup distribution


def test_problems_page_shows_a_check_report(home, tmp_path):
    from kforge_core.problem_check import CheckRow, write_reports

    write_reports([CheckRow("level1/1_ReLU", "ok", eager_ms=0.1, baseline_ms=0.05, eager_vs_baseline=2.0),
                   CheckRow("level1/19_ReLU", "does_not_fit", "does not fit: ...")], tmp_path / "chk", "t")
    at = app("pages/problems.py")
    at.text_input(key="check_folder").set_value(str(tmp_path / "nothing")).run()
    assert any("No check.csv" in e.value for e in at.error)
    at.text_input(key="check_folder").set_value(str(tmp_path / "chk")).run()
    assert not at.exception and at.metric[0].value == "1 of 2"
