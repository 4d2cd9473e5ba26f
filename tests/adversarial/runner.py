"""Reads an adversarial case (header + code) and evaluates it; shared by the CPU and GPU test files.

Header lines at the top of each case:
    # tries:    what the candidate tries
    # expect:   the verdict it must get (`a | b`: either, where which check fires first depends on the
    #           allocator, e.g. whether a freed address comes back; each is a failure of the cheat)
    # backend:  cpu | cuda                 (default cpu)
    # problem:  built-in name or adversarial/problems/NAME.py   (default level1/1_ReLU)
    # preamble: relu_ext                   (optional: prepend the shared extension)
    # settings: key=value, key=value       (optional EvalSettings overrides)
    # message:  text a message must contain when the verdict is the first expected one (optional)
    # generate: empty | binary | 10mb      (optional: the candidate is generated, not the code below)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from preambles import PREAMBLES

from kforge_core.evaluation import EvalSettings, evaluate
from kforge_core.problems import load_problem_file, resolve_problem

HERE = Path(__file__).resolve().parent
CASES = sorted((HERE / "cases").glob("*.py"))
FAST = dict(compile_reference=False, min_timing_s=0.05, min_reps=5, max_reps=20, run_timeout_s=30)


@dataclass
class Case:
    path: Path
    tries: str
    expect: str
    backend: str = "cpu"
    problem: str = "level1/1_ReLU"
    preamble: str = ""
    settings: dict = field(default_factory=dict)
    message: str = ""
    generate: str = ""
    body: str = ""

    @property
    def expected(self) -> set[str]:
        return {v.strip() for v in self.expect.split("|")}

    @property
    def name(self) -> str:
        return self.path.stem

    def message_due(self, verdict: str) -> bool:
        """Whether `message` must be found: it goes with the first expected verdict (a case may end as either)."""
        return bool(self.message) and verdict == self.expect.split("|")[0].strip()


def _value(v: str):
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return v


def read_case(path: Path) -> Case:
    text = path.read_text()
    head = dict(re.findall(r"^# (\w+):\s*(.*)$", text.split("\n\n", 1)[0], re.M))
    settings = {}
    for item in filter(None, (s.strip() for s in head.get("settings", "").split(","))):
        k, v = item.split("=", 1)
        settings[k.strip()] = _value(v.strip())
    return Case(path, head["tries"], head["expect"], head.get("backend", "cpu"), head.get("problem", "level1/1_ReLU"),
                head.get("preamble", ""), settings, head.get("message", ""), head.get("generate", ""), text)


def candidate_source(case: Case) -> str:
    if case.generate == "empty":
        return ""
    if case.generate == "binary":
        return "\x7fELF\x02\x01\x01\x00" + "\x00\xff" * 512
    if case.generate == "10mb":
        return "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n" + "#" * (10 << 20)
    pre = PREAMBLES[(case.preamble, case.backend)] if case.preamble else ""
    return pre + "\n" + case.body


def problem_of(case: Case):
    if case.problem.startswith("adversarial/"):
        return load_problem_file(HERE / case.problem.split("/", 1)[1])
    return resolve_problem(case.problem)


def run_case(case: Case):
    settings = EvalSettings(**{**FAST, **case.settings})
    return evaluate(problem_of(case), candidate_source(case), case.backend, settings)
