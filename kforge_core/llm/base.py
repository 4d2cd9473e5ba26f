"""One small interface for every model provider: messages (text + images) in, text + token usage out."""

from __future__ import annotations

import base64
import random
import time
from dataclasses import dataclass, field
from typing import Callable, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class ImageData:
    data: bytes
    mime: str = "image/png"
    label: str = ""  # e.g. "Nsight Compute: Memory Workload Analysis"

    def b64(self) -> str:
        return base64.b64encode(self.data).decode()


@dataclass
class Message:
    role: str  # "system" | "user" | "assistant"
    text: str
    images: list[ImageData] = field(default_factory=list)


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None  # None where the model's price is unknown

    def __add__(self, other: "Usage") -> "Usage":
        cost = None if self.cost_usd is None and other.cost_usd is None else (self.cost_usd or 0) + (other.cost_usd or 0)
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens, cost)


@dataclass
class Completion:
    text: str
    usage: Usage
    model: str
    provider: str
    finish_reason: str = ""
    attempts: int = 1
    seconds: float = 0.0


def call_record(c: Completion, provider_label: str) -> dict:
    """Everything about one model call that a user comparing models wants (the raw answer is stored beside)."""
    return {"provider": provider_label, "model": c.model, "finish_reason": c.finish_reason, "attempts": c.attempts,
            "seconds": c.seconds, "input_tokens": c.usage.input_tokens, "output_tokens": c.usage.output_tokens,
            "cost_usd": c.usage.cost_usd}


class Cancelled(Exception):
    """The run was stopped while a provider waited (a paste-in answer): not a failure of the provider, and
    the step it interrupted is redone on resume."""


class LLMError(Exception):
    """A provider failure with a message a user can act on."""

    retryable = False


class AuthError(LLMError):
    pass


class ModelNotFound(LLMError):
    pass


class ContextLengthExceeded(LLMError):
    pass


class ContentFiltered(LLMError):
    pass


class RateLimited(LLMError):
    retryable = True

    def __init__(self, msg: str, retry_after: float | None = None):
        super().__init__(msg)
        self.retry_after = retry_after


class ServerError(LLMError):
    retryable = True


class RequestTimeout(LLMError):
    retryable = True


class Provider:
    """complete(messages) -> Completion. Subclasses set `name` and implement `_complete_once`."""

    name = "base"
    supports_images = True
    limiter = None  # a shared RateLimiter (bench mode): every attempt, retries included, passes through it

    def __init__(self, model: str, max_retries: int = 4, backoff_s: float = 1.0, sleep: Callable = time.sleep):
        self.model = model
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self._sleep = sleep

    @property
    def label(self) -> str:
        return f"{self.name}:{self.model}"

    def complete(self, messages: list[Message]) -> Completion:
        t0 = time.monotonic()
        once = (lambda: self.limiter.run(lambda: self._complete_once(messages))) if self.limiter else \
            (lambda: self._complete_once(messages))
        completion, attempts = with_retries(once, self.max_retries, self.backoff_s, self._sleep)
        completion.attempts, completion.seconds = attempts, round(time.monotonic() - t0, 3)
        return completion

    def resume_after(self, answers_used: int) -> None:
        """Told, when a run resumes, how many answers its completed steps used (a replaying provider skips
        them; a live model has nothing to do)."""

    def _complete_once(self, messages: list[Message]) -> Completion:
        raise NotImplementedError


def with_retries(call: Callable[[], T], max_retries: int, backoff_s: float, sleep: Callable = time.sleep):
    """Retry retryable LLMErrors with exponential backoff and jitter (honouring Retry-After)."""
    attempt = 0
    while True:
        attempt += 1
        try:
            return call(), attempt
        except LLMError as e:
            if not e.retryable or attempt > max_retries:
                if e.retryable:
                    raise type(e)(f"{e} (gave up after {attempt} attempts)") from e
                raise
            delay = getattr(e, "retry_after", None) or backoff_s * 2 ** (attempt - 1) * (1 + random.random() / 4)
            sleep(min(delay, 60.0))


# Approximate list prices in USD per million tokens (input, output). Unknown models report no cost rather
# than a wrong one; users can extend this table (kforge_core.llm.base.PRICES_PER_MTOK).
PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4.1": (2.0, 8.0),
    "o3": (2.0, 8.0),
    "o4-mini": (1.1, 4.4),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-3-5-haiku": (0.8, 4.0),
}


def price_usage(model: str, input_tokens: int, output_tokens: int) -> Usage:
    key = max((k for k in PRICES_PER_MTOK if model.startswith(k)), key=len, default=None)
    cost = None
    if key:
        pin, pout = PRICES_PER_MTOK[key]
        cost = round((input_tokens * pin + output_tokens * pout) / 1e6, 6)
    return Usage(input_tokens, output_tokens, cost)
