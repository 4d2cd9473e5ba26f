"""One background thread per run, so the UI never blocks; the UI follows a run by polling the store."""

from __future__ import annotations

import threading
import traceback
from typing import Callable

from kforge_core.llm.base import Provider
from kforge_core.session import Session
from kforge_core.store import Store

ProviderFactory = Callable[[dict, str], tuple[Provider, Provider]]  # (run config, run id) -> (generator, analyst)


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
        with self._lock:
            if self.is_active(run_id):
                return False
            self.store.update_run(run_id, status="running")
            t = threading.Thread(target=self._work, args=(run_id,), name=f"kforge-run-{run_id}", daemon=True)
            self._threads[run_id] = t
            t.start()
            return True

    def session(self, run_id: str) -> Session:
        cfg = self.store.config(run_id)
        if not self.is_active(run_id) or threading.current_thread() is self._threads.get(run_id):
            # before providers are built: a scripted provider skips only answers of completed rounds
            self.store.discard_incomplete_rounds(run_id)
        gen, ana = self.providers(cfg, run_id)
        return Session(self.store, run_id, gen, ana)

    def stop(self, run_id: str) -> None:
        s = self._sessions.get(run_id)
        if s:
            s.stop_requested.set()
        self.store.update_run(run_id, status="stopped", note="stopped by the user")

    def wait(self, run_id: str, timeout: float | None = None) -> None:
        t = self._threads.get(run_id)
        if t:
            t.join(timeout)

    def _work(self, run_id: str) -> None:
        try:
            s = self.session(run_id)
            self._sessions[run_id] = s
            s.run()
        except Exception as e:  # keep the app alive and say what happened on the run
            self.store.update_run(run_id, status="failed", note=f"{type(e).__name__}: {e}")
            self.store.write_text(run_id, None, "error.txt", traceback.format_exc())
        finally:
            self._sessions.pop(run_id, None)


def default_providers(store: Store, secrets=None) -> ProviderFactory:
    """Providers for a run from its stored config (+ keys from the environment or `secrets`).

    Scripted providers skip the answers a resumed run already consumed; manual (paste-in) providers
    exchange prompt/answer files in the run's folder, so a pasted answer survives an app restart.
    """
    from kforge_core.llm.config import ProviderConfig, make_provider
    from kforge_core.llm.offline import ManualProvider, ScriptedProvider

    def build(cfg: dict, run_id: str, role: str) -> Provider:
        pc = ProviderConfig.from_dict(cfg)
        if pc.kind == "manual":
            return ManualProvider(prompt_dir=store.round_dir(run_id, None) / f"manual_{role}", wait_s=24 * 3600)
        p = make_provider(pc, secrets)
        if isinstance(p, ScriptedProvider):
            answer = "generation_answer.txt" if role == "generation" else "analysis_answer.txt"
            used = sum(1 for r in store.rounds(run_id) if store.read_text(run_id, r["idx"], answer) is not None)
            p.answers = p.answers[used:]
        return p

    def factory(config: dict, run_id: str | None = None) -> tuple[Provider, Provider]:
        gen = build(config["provider"], run_id, "generation")
        ana = build(config["analysis_provider"], run_id, "analysis") if config.get("analysis_provider") else gen
        return gen, ana

    return factory
