"""Run the evaluation worker in a child process that cannot hurt the caller.

The child gets its own session (so it and everything it spawns die together), a wall-clock deadline for
the build and another for running, a resident-memory watchdog over its whole process group, and stdout /
stderr into files. Whatever happens to it, the caller gets a ChildOutcome back.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kforge_core import REPO_ROOT
from kforge_core.evaluation.isolation import spare

POLL_S = 0.05
TIMING_POLL_S = 0.005  # finer while timing: the parent's clock on the wall blocks is this coarse
TAIL_CHARS = 4000
RUN_STAGES = {"correctness", "timing"}  # stages that run under the run deadline, not the build one


@dataclass
class ChildOutcome:
    returncode: int | None
    events: list[dict] = field(default_factory=list)
    timed_out: str = ""  # the stage that ran past its deadline
    memory_exceeded_mb: float = 0.0
    stdout_tail: str = ""
    stderr_tail: str = ""
    wall_s: float = 0.0
    # the worker's wall blocks as this (the parent) process's clock saw them: side -> [{seconds, reps}, ...]
    wall_blocks: dict = field(default_factory=dict)

    @property
    def last_stage(self) -> str:
        stages = [e["stage"] for e in self.events if "stage" in e]
        return stages[-1] if stages else "start"

    @property
    def last_region(self) -> str:
        """Whose code the worker was running last: "candidate", "harness" or "" (before either)."""
        regions = [e["region"] for e in self.events if "region" in e]
        return regions[-1] if regions else ""

    def final(self, key: str):
        for e in reversed(self.events):
            if key in e:
                return e[key]
        return None


def _session_pids(sid: int) -> list[int]:
    """Every process in session `sid` (Linux /proc). The session, not the process group: ninja starts each
    compiler in a process group of its own, and those compilers must count and die with the worker."""
    pids = []
    try:
        entries = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return pids
    for pid in entries:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[3]) == sid and fields[0] != "Z":  # state, ppid, pgrp, session; zombies are dead
                pids.append(int(pid))
        except (OSError, ValueError, IndexError):
            continue
    return pids


def _session_rss_bytes(sid: int) -> int:
    """Resident memory of every process in the session; 0 where unavailable."""
    total, page = 0, os.sysconf("SC_PAGE_SIZE")
    for pid in _session_pids(sid):
        try:
            with open(f"/proc/{pid}/statm") as f:
                total += int(f.read().split()[1]) * page
        except (OSError, ValueError, IndexError):
            continue
    return total


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - TAIL_CHARS))
            data = f.read().decode("utf-8", "replace")
        return (f"[... {size - TAIL_CHARS} earlier bytes]\n" if size > TAIL_CHARS else "") + data
    except OSError:
        return ""


class _EventReader:
    def __init__(self, path: Path):
        self.path, self.pos, self.events, self._partial = path, 0, [], ""

    def poll(self) -> list[dict]:
        try:
            with open(self.path) as f:
                f.seek(self.pos)
                chunk = f.read()
                self.pos = f.tell()
        except OSError:
            return self.events
        lines = (self._partial + chunk).split("\n")
        self._partial = lines.pop()
        for line in lines:
            try:
                self.events.append(json.loads(line))
            except json.JSONDecodeError:
                pass
        return self.events


def _kill_session(sid: int) -> None:
    """SIGKILL the worker's process group and every other process of its session (until none is left:
    a process may fork while we kill)."""
    try:
        os.killpg(sid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for _ in range(20):
        pids = [p for p in _session_pids(sid) if p != sid]
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.01)


def _with_repo_path(env: dict[str, str]) -> dict[str, str]:
    # The worker must import kforge_core even when it is not installed (e.g. a plain checkout).
    paths = [str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    return {**env, "PYTHONPATH": os.pathsep.join(paths)}


class SpareWorkers:
    """An idle spare worker (torch already imported) kept ready in this process, so the next evaluation
    does not wait for interpreter start-up and imports (seconds on a GPU machine). Each spare serves one
    job and a new one starts in the background when it is taken. Spares are kept per value of what a
    process cannot change once started (SPARE_KEY_VARS): Triton's interpreter switch (read at import), the
    GPUs it sees, and whether it runs on a GPU (such a spare has its CUDA context made, ~0.5-1 s less per
    verdict). KFORGE_SPARE_WORKERS=0 turns them off.

    GPU jobs keep GPU_SPARES spares per key and start the next one as a spare is taken: back to back (a batch),
    a spare's start (5-7 s of imports and CUDA context on an H200) took longer than the verdict it served, so
    with one spare started after each job the GPU waited for it every time. CPU-backend jobs keep one, started
    after the job, so its imports never share the cores with the job's timings."""

    def __init__(self):
        self._lock = threading.Lock()
        self._spares: dict[tuple, list[subprocess.Popen]] = {}
        self._ready_files: dict[int, Path] = {}  # pid -> the file a spare creates once its imports are done

    @staticmethod
    def enabled() -> bool:
        return os.environ.get("KFORGE_SPARE_WORKERS", "1") != "0"

    def _start(self, key: tuple) -> subprocess.Popen:
        env = {k: v for k, v in os.environ.items() if k not in SPARE_KEY_VARS}
        env.update({k: v for k, v in zip(SPARE_KEY_VARS, key) if v is not None})
        ready = Path(tempfile.mktemp(prefix="kforge-spare-ready-"))
        env["KFORGE_SPARE_READY_FILE"] = str(ready)
        proc = subprocess.Popen([sys.executable, "-m", "kforge_core.evaluation.isolation.spare"], env=_with_repo_path(env),
                                cwd=tempfile.gettempdir(), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        self._ready_files[proc.pid] = ready
        return proc

    @staticmethod
    def _depth(key: tuple) -> int:
        gpu = key[SPARE_KEY_VARS.index(spare.GPU_WORKER_VAR)] == "1"
        return GPU_SPARES if gpu else 1

    def _ready(self, proc: subprocess.Popen) -> bool:
        f = self._ready_files.get(proc.pid)
        return f is not None and f.exists()

    @staticmethod
    def _key(env: dict[str, str]) -> tuple:
        """The values of SPARE_KEY_VARS a job with this environment runs under: the spare it needs."""
        full = {**os.environ, **env}
        return tuple(full.get(k) for k in SPARE_KEY_VARS)

    def wait_ready(self, timeout_s: float = 30.0) -> bool:
        """Wait until every spare has done its imports (benchmarks: measure a verdict with a spare ready, as
        between two rounds of a run). False when there is none or one is not ready in time."""
        deadline = time.monotonic() + timeout_s
        spares = [p for procs in list(self._spares.values()) for p in procs]
        for proc in spares:
            while not self._ready(proc):
                if time.monotonic() > deadline or proc.poll() is not None:
                    return False
                time.sleep(0.05)
        return bool(spares)

    def replenish(self, env: dict[str, str], module: str) -> None:
        """Start the next spare once a job is over: its imports then run while the model thinks about the
        next round, not beside this job's timings (on a CPU backend they would share the cores)."""
        if not self.enabled() or not module.startswith(SPARE_MODULES):
            return
        key = self._key(env)
        with self._lock:
            alive = [p for p in self._spares.get(key, []) if p.poll() is None]
            while len(alive) < self._depth(key):
                alive.append(self._start(key))
            self._spares[key] = alive

    def take(self, jobdir: Path, env: dict[str, str], module: str) -> subprocess.Popen | None:
        """Hand the job to the spare (None if there is none alive)."""
        if not self.enabled() or not module.startswith(SPARE_MODULES):
            return None
        key = self._key(env)
        with self._lock:
            alive = [p for p in self._spares.get(key, []) if p.poll() is None]
            ready = [p for p in alive if self._ready(p)]
            proc = (ready or alive or [None])[0]  # one that has done its imports, else the oldest
            self._spares[key] = [p for p in alive if p is not proc]
        if proc is None:
            return None
        self._ready_files.pop(proc.pid, None)
        if self._depth(key) > 1:
            self.replenish(env, module)  # the next GPU job's spare starts now, beside this job
        try:
            full_env = _with_repo_path({**os.environ, **env})  # as of now, not as of the spare's start
            proc.stdin.write(json.dumps({"jobdir": str(jobdir), "env": full_env, "module": module}).encode() + b"\n")
            proc.stdin.close()
        except OSError:  # it died meanwhile
            _kill_session(proc.pid)
            proc.wait()
            return None
        return proc


SPARE_MODULES = spare.ALLOWED  # the worker modules a spare may run
SPARE_KEY_VARS = ("TRITON_INTERPRET", "CUDA_VISIBLE_DEVICES", spare.GPU_WORKER_VAR)
GPU_SPARES = int(os.environ.get("KFORGE_GPU_SPARES", "3"))
SPARES = SpareWorkers()


def _stamp_wall_block(e: dict, now: float, starts: dict, blocks: dict) -> None:
    """The parent's own clock on the worker's wall blocks (honesty.py): seconds between seeing start and end."""
    side = e.get("wall_block")
    if not isinstance(side, str):
        return
    key = (side, e.get("block"))
    if e.get("at") == "start":
        starts[key] = now
    elif e.get("at") == "end" and key in starts:
        blocks.setdefault(side, []).append({"s": now - starts.pop(key), "reps": e.get("reps")})


def run_worker(jobdir: Path, env: dict[str, str], build_timeout_s: float, run_timeout_s: float,
               memory_limit_mb: int, module: str = "kforge_core.evaluation.worker.main",
               on_events: Callable[[list[dict]], None] | None = None) -> ChildOutcome:
    out_path, err_path = jobdir / "stdout.txt", jobdir / "stderr.txt"
    events = _EventReader(jobdir / "events.jsonl")
    t0 = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = SPARES.take(jobdir, env, module)
        if proc is None:
            proc = subprocess.Popen([sys.executable, "-m", module, str(jobdir)], cwd=jobdir,
                                    env=_with_repo_path({**os.environ, **env}), stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=err, start_new_session=True)
    outcome = ChildOutcome(returncode=None)
    deadline, run_deadline_set, next_mem_check, seen = t0 + build_timeout_s, False, t0, 0
    block_starts: dict[str, float] = {}
    try:
        while proc.poll() is None:
            now = time.monotonic()
            stage = ChildOutcome(None, events.poll()).last_stage
            if len(events.events) != seen:
                for e in events.events[seen:]:
                    _stamp_wall_block(e, now, block_starts, outcome.wall_blocks)
                seen = len(events.events)
                if on_events:
                    on_events(events.events)
            if stage in RUN_STAGES and not run_deadline_set:
                # a worker that measured a large problem (fit check) may ask for more, never for less
                scaled = ChildOutcome(None, events.poll()).final("run_timeout_s") or 0
                deadline, run_deadline_set = now + max(run_timeout_s, scaled), True
            if now > deadline:
                outcome.timed_out = stage
                break
            if now >= next_mem_check:
                rss = _session_rss_bytes(proc.pid)
                if rss > memory_limit_mb << 20:
                    outcome.memory_exceeded_mb = rss / 2**20
                    break
                next_mem_check = now + 0.2
            time.sleep(TIMING_POLL_S if stage == "timing" else POLL_S)
    finally:
        # Always take the whole session down: leftover grandchildren (forks, daemons, compilers) die with it.
        _kill_session(proc.pid)
        proc.wait()
        SPARES.replenish(env, module)
    outcome.returncode = proc.returncode
    outcome.events = events.poll()
    outcome.stdout_tail, outcome.stderr_tail = _tail(out_path), _tail(err_path)
    outcome.wall_s = time.monotonic() - t0
    return outcome
