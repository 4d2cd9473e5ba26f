"""Background jobs for the UI: the Streamlit script thread submits work and polls, so a rerun or a
closed tab never blocks or kills an evaluation. (Each evaluation is itself an isolated subprocess.)"""

from __future__ import annotations

import threading
import traceback
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="kforge-job")
_JOBS: dict[str, Future] = {}
_LOCK = threading.Lock()


@dataclass
class JobState:
    done: bool
    result: Any = None
    error: str = ""


def submit(fn: Callable, *args, **kwargs) -> str:
    job_id = uuid.uuid4().hex[:12]
    with _LOCK:
        _JOBS[job_id] = _POOL.submit(fn, *args, **kwargs)
    return job_id


def state(job_id: str) -> JobState | None:
    with _LOCK:
        fut = _JOBS.get(job_id)
    if fut is None:
        return None
    if not fut.done():
        return JobState(False)
    exc = fut.exception()
    if exc is not None:
        return JobState(True, error="".join(traceback.format_exception_only(type(exc), exc)).strip())
    return JobState(True, result=fut.result())


def build_seconds(backend: str) -> list[float]:
    """Build stage seconds of this process's finished evaluations on a backend (the Evaluate page's estimate)."""
    with _LOCK:
        futures = list(_JOBS.values())
    out = []
    for fut in futures:
        if fut.done() and fut.exception() is None:
            r = fut.result()
            if getattr(r, "backend", None) == backend and (s := getattr(r, "stage_seconds", {}).get("build")) is not None:
                out.append(s)
    return out
