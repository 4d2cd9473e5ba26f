"""One background thread per run, so the UI never blocks; the UI follows a run by polling the store."""

from __future__ import annotations

import threading
import traceback
from typing import Callable

from kforge_core import artifacts as A
from kforge_core.llm.base import ImageData, Provider
from kforge_core.run_record import RunRecord
from kforge_core.session import Session
from kforge_core.store import Store

ProviderFactory = Callable[[dict, str], tuple[Provider, Provider]]  # (run config, run id) -> (generator, analyst)


FINISHING_THREAD_S = 3.0  # a thread that set its final status returns within moments; a stopped one may not


class RunManager:
    def __init__(self, store: Store, providers: ProviderFactory):
        self.store, self.providers = store, providers
        self._threads: dict[str, threading.Thread] = {}
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()
        self.mark_interrupted()

    def mark_interrupted(self) -> None:
        """Runs left 'running' by a process that died are shown as interrupted (and can be resumed)."""
        for run in self.store.runs(status="running"):
            if not self.is_active(run["id"]):
                self.store.update_run(run["id"], status="interrupted")

    def is_active(self, run_id: str) -> bool:
        t = self._threads.get(run_id)
        return t is not None and t.is_alive()

    def start(self, run_id: str) -> bool:
        """Start (or resume) a run in the background; False when it is already running."""
        return self._start(run_id, lambda s: s.run())

    def reanalyse(self, run_id: str, idx: int, images: list[ImageData]) -> bool:
        """Store the screenshots, then run the analysis again in the background (off the page's thread,
        so a rerun of the page cannot cut it short); the run goes back to its gate after."""
        RunRecord(self.store, run_id).add_screenshots(idx, images)

        def work(s: Session) -> None:
            s.reanalyse(idx)
            s.run()  # nothing left to do but wait at the gate again: sets the status

        return self._start(run_id, work)

    def _start(self, run_id: str, work: Callable[[Session], None]) -> bool:
        with self._lock:
            t = self._threads.get(run_id)
            if t is not None and t.is_alive() and (self.store.run(run_id) or {}).get("status") != "running":
                t.join(FINISHING_THREAD_S)  # it has written its final status and is returning: a gate decision
                # taken in that moment (right after a re-analysis) must still start the run
            if self.is_active(run_id):
                return False
            self.store.update_run(run_id, status="running")
            t = threading.Thread(target=self._work, args=(run_id, work), name=f"kforge-run-{run_id}", daemon=True)
            self._threads[run_id] = t
            t.start()
            return True

    def record(self, run_id: str) -> RunRecord:
        """What pages hold: reads and the gate's writes, no providers, nothing that deletes."""
        return RunRecord(self.store, run_id)

    def session(self, run_id: str) -> Session:
        """The run's session, built once (providers included) and kept while the manager lives."""
        with self._lock:
            s = self._sessions.get(run_id)
            if s is None:
                gen, ana = self.providers(self.store.config(run_id), run_id)
                s = self._sessions[run_id] = Session(self.store, run_id, gen, ana)
            return s

    def stop(self, run_id: str) -> None:
        s = self._sessions.get(run_id)
        if s and self.is_active(run_id):
            s.stop_requested.set()
        self.store.update_run(run_id, status="stopped", note="stopped by the user")

    def wait(self, run_id: str, timeout: float | None = None) -> None:
        t = self._threads.get(run_id)
        if t:
            t.join(timeout)

    def _work(self, run_id: str, work: Callable[[Session], None]) -> None:
        try:
            s = self.session(run_id)
            s.stop_requested.clear()  # a stop applies to the work it interrupted, not to a later resume
            work(s)
        except Exception as e:  # keep the app alive and say what happened on the run
            self.store.update_run(run_id, status="failed", note=f"{type(e).__name__}: {e}")
            self.store.write_text(run_id, None, A.RUN_ERROR, traceback.format_exc())


def answers_used(store: Store, run_id: str, role: str) -> int:
    """Steps of a role a run has completed (the step's marker file is written after the answer), so a
    resumed scripted run replays the next step's answer. A re-analysis is the same step again, not a new one."""
    done, answer = (A.GENERATION, A.GENERATION_ANSWER) if role == "generation" else (A.ANALYSIS, A.ANALYSIS_ANSWER)
    return sum(1 for r in store.rounds(run_id)
               if (store.round_dir(run_id, r["idx"]) / done).exists()
               and (store.round_dir(run_id, r["idx"]) / answer).exists())


def default_providers(store: Store, secrets=None) -> ProviderFactory:
    """Providers for a run from its stored config (+ keys from the environment or `secrets`).

    Each provider is told how many answers the run's completed steps used (a scripted one skips them), and
    gets a folder of the run for its role (the paste-in provider exchanges prompt and answer files there).
    """
    from kforge_core.llm.config import ProviderConfig, make_provider

    def build(cfg: dict, run_id: str, role: str) -> Provider:
        workdir = store.round_dir(run_id, None) / A.manual_dir(role)
        p = make_provider(ProviderConfig.from_dict(cfg), secrets, workdir=workdir)
        p.resume_after(answers_used(store, run_id, role))
        return p

    def factory(config: dict, run_id: str | None = None) -> tuple[Provider, Provider]:
        gen = build(config["provider"], run_id, "generation")
        if config.get("analysis_provider"):
            ana = build(config["analysis_provider"], run_id, "analysis")
        elif config["provider"].get("kind") == "manual":  # the analysis prompts under their own label and folder
            ana = build(config["provider"], run_id, "analysis")
        else:
            ana = gen
        return gen, ana

    return factory
