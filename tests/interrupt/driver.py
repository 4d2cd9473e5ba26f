"""Drive a run in this process and kill the process (SIGKILL) at a chosen point.

    python tests/interrupt/driver.py HOME RUN_ID KILL_POINT

KILL_POINT is "phase:NAME@ROUND" (killed as round ROUND enters phase NAME), "wrote:FILE@ROUND" (killed right
after round ROUND's artifact FILE is written) or "none". The evaluator is replaced by CannedExecutor: these tests are about what
the session and store keep, and a real build would only make them slow.
"""

from __future__ import annotations

import os
import signal
import sys

from kforge_core.evaluation import EvalResult, TimingStats, TrialResult, Verdict
from kforge_core.executors import Executor
from kforge_core.runner import default_providers
from kforge_core.session import Session
from kforge_core.store import Store


class CannedExecutor(Executor):
    """A correct verdict with timings, without running anything."""

    def evaluate(self, problem, program, backend, settings):
        t = lambda ms: TimingStats(ms, ms, ms, ms, ms, ms, 0.0, 10)  # noqa: E731
        return EvalResult(Verdict.CORRECT, ["all 1 trials match the reference"], problem=problem.name,
                          backend=backend, trials=[TrialResult(42, True, 0.0, 0.0, 0.0)],
                          timings={"eager": t(2.0), "candidate": t(1.0)})

    def profile(self, problem, program, backend, tool, settings):
        return None, ["profiling skipped in this test"], None


def kill_at(store: Store, point: str) -> None:
    kind, _, rest = point.partition(":")
    name, _, at = rest.partition("@")
    at = int(at or 1)
    die = lambda: os.kill(os.getpid(), signal.SIGKILL)  # noqa: E731
    if kind == "phase":
        original = store.set_round

        def set_round(run_id, idx, phase, *a, **kw):
            if phase == name and idx == at:
                die()
            return original(run_id, idx, phase, *a, **kw)

        store.set_round = set_round
    elif kind == "wrote":
        original_write = store.write_text

        def write_text(run_id, idx, fname, text):
            path = original_write(run_id, idx, fname, text)
            if fname == name and idx == at:
                die()
            return path

        store.write_text = write_text


def main() -> int:
    home, run_id, point = sys.argv[1:4]
    store = Store(home)
    kill_at(store, point)
    gen, ana = default_providers(store)(store.config(run_id), run_id)
    print(Session(store, run_id, gen, ana, executor=CannedExecutor()).run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
