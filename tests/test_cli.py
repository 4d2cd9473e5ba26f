import json
import time
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def kforge(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "kforge_core", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def test_eval_builtin_problem_with_shipped_example_prints_correct(tmp_path):
    out = tmp_path / "result.json"
    p = kforge("eval", "--problem", "level1/1_ReLU", "--backend", "cpu", "--candidate",
               "assets/examples/cpu/level1/1_ReLU.py", "--json", str(out), "--no-compile")
    assert p.returncode == 0, p.stderr
    assert "verdict   correct" in p.stdout and "speedup vs eager:" in p.stdout
    data = json.loads(out.read_text())
    assert data["verdict"] == "correct" and data["speedup_vs_eager"] > 0 and len(data["trials"]) == 3


def test_eval_reports_problem_errors_cleanly(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("class Model(:\n")
    p = kforge("eval", "--problem", str(bad), "--candidate", "assets/examples/cpu/level1/1_ReLU.py")
    assert p.returncode == 2 and "syntax error" in p.stderr and "Traceback" not in p.stderr


def test_eval_unknown_backend_and_missing_candidate():
    p = kforge("eval", "--problem", "1_ReLU", "--backend", "fpga", "--candidate", "x.py")
    assert p.returncode == 2 and "unknown backend 'fpga'" in p.stderr
    p = kforge("eval", "--problem", "1_ReLU", "--candidate", "does_not_exist.py")
    assert p.returncode == 2 and "cannot read candidate" in p.stderr


def test_problems_and_backends_listing():
    p = kforge("problems")
    assert p.returncode == 0 and "level3/3_TransformerBlock" in p.stdout
    p = kforge("backends")
    assert p.returncode == 0 and p.stdout.startswith("cpu")


def test_eval_watch_gives_a_new_verdict_on_each_save_from_a_ready_worker(tmp_path):
    """`kforge eval --watch`: a verdict per save; the second comes from the spare worker started meanwhile."""
    cand = tmp_path / "cand.py"
    good = (ROOT / "assets/examples/cpu/level1/1_ReLU.py").read_text()
    cand.write_text(good)
    out = tmp_path / "result.json"
    p = subprocess.Popen([sys.executable, "-m", "kforge_core", "eval", "--problem", "level1/1_ReLU", "--candidate",
                          str(cand), "--no-timing", "--json", str(out), "--watch", "2"], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        for line in p.stdout:
            lines.append(line)
            if line.startswith("-- verdict 1:"):
                break
        assert "-- verdict 1: correct" in "".join(lines), "".join(lines)
        time.sleep(8)  # a person editing: meanwhile the spare worker imports torch
        wrong = good.replace("return relu_ext.relu_forward(x)", "return 2 * relu_ext.relu_forward(x)")
        assert wrong != good
        cand.write_text(wrong)
        rest, err = p.communicate(timeout=600)
    finally:
        p.kill()
    assert p.returncode == 0, err
    assert "-- verdict 2: numerical_mismatch" in rest, rest
    second = json.loads(out.read_text())
    assert second["verdict"] == "numerical_mismatch" and second["environment"]["spare_worker"] is True
