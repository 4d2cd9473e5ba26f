"""A limit on model calls shared by every session of a bench: at most `max_concurrent` requests in flight
and at most `per_minute` started in any 60-second window (the providers' own retries still handle 429s)."""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Callable, TypeVar

T = TypeVar("T")


class RateLimiter:
    def __init__(self, per_minute: float | None = None, max_concurrent: int | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep):
        self.per_minute, self.max_concurrent = per_minute, max_concurrent
        self._clock, self._sleep = clock, sleep
        self._slots = threading.BoundedSemaphore(max_concurrent) if max_concurrent else None
        self._starts: deque[float] = deque()
        self._lock = threading.Lock()
        self.waited_s = 0.0  # total time callers spent waiting for the rate (shown in bench reports)

    def _wait_for_rate(self) -> None:
        if not self.per_minute:
            return
        while True:
            with self._lock:
                now = self._clock()
                while self._starts and now - self._starts[0] >= 60.0:
                    self._starts.popleft()
                if len(self._starts) < self.per_minute:
                    self._starts.append(now)
                    return
                delay = 60.0 - (now - self._starts[0])
                self.waited_s += delay
            self._sleep(delay)

    def run(self, call: Callable[[], T]) -> T:
        if self._slots:
            self._slots.acquire()
        try:
            self._wait_for_rate()
            return call()
        finally:
            if self._slots:
                self._slots.release()
