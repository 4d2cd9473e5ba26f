import math

import pytest

from kforge_core.metrics import (ProblemOutcome, fast_p, fast_p_table, geomean_speedup, markdown_table,
                                 per_problem_csv, per_problem_table, summary)

OUT = [ProblemOutcome("a", True, 2.5, 1.2, 0.01, 1000), ProblemOutcome("b", True, 1.2, 0.8, 0.02, 3000),
       ProblemOutcome("c", True, 0.5, None), ProblemOutcome("d", False, None, None, 0.03, 500)]


def test_fast_p_against_each_baseline():
    assert fast_p(OUT, 0) == 0.75  # correctness rate
    assert fast_p(OUT, 1.0) == 0.5 and fast_p(OUT, 1.5) == 0.25 and fast_p(OUT, 2.0) == 0.25
    assert fast_p(OUT, 1.0, "compiled") == 0.25  # c was not timed against torch.compile: not fast
    assert fast_p([], 1.0) == 0.0


def test_fast_p_is_strictly_greater_than_p():
    assert fast_p([ProblemOutcome("x", True, 1.0)], 1.0) == 0.0


def test_geomean_and_summary():
    assert geomean_speedup(OUT) == pytest.approx(math.exp((math.log(2.5) + math.log(1.2) + math.log(0.5)) / 3))
    assert geomean_speedup([ProblemOutcome("d", False)]) is None
    s = summary(OUT)
    assert s["problems"] == 4 and s["correct"] == 3 and s["fast_1.5_eager"] == 0.25
    assert s["cost_usd_per_problem"] == pytest.approx(0.02) and s["tokens_per_problem"] == 1125


def test_tables():
    md = markdown_table(OUT)
    assert "| eager | 75.0% | 50.0% | 25.0% | 25.0% |" in md
    csv_text = per_problem_csv(OUT)
    assert csv_text.splitlines()[0].startswith("problem,sample,verdict,correct,rounds,speedup_eager")
    assert len(csv_text.splitlines()) == 5
    assert "| 3/4 | 1.14x |" in md  # geomean of 2.5, 1.2, 0.5


def test_untimed_baseline_shows_na():
    md = fast_p_table([ProblemOutcome("a", True, 1.5, None), ProblemOutcome("b", False)])
    assert "| eager | 50.0% | 50.0% | 0.0% | 0.0% |" in md
    assert "| compiled | 50.0% | n/a | n/a | n/a |" in md
    assert "| a | 0 |" in per_problem_table([ProblemOutcome("a", True, 1.5, None, verdict="correct")])
