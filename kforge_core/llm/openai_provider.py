"""OpenAI chat completions through the official SDK; `base_url` makes it any OpenAI-compatible server
(vLLM, SGLang, Ollama, LM Studio, llama.cpp server)."""

from __future__ import annotations

import re

import openai

from kforge_core.llm.base import (AuthError, Completion, ContentFiltered, ContextLengthExceeded, LLMError,
                                  Message, ModelNotFound, Provider, RateLimited, RequestTimeout, ServerError,
                                  price_usage)

REASONING_MODEL = re.compile(r"^(o\d|gpt-5)")


def _retry_after(e: openai.APIStatusError) -> float | None:
    try:
        return float(e.response.headers.get("retry-after"))
    except (TypeError, ValueError, AttributeError):
        return None


def _error_text(e: openai.APIStatusError) -> str:
    body = e.body if isinstance(e.body, dict) else {}
    err = body.get("error", body) if isinstance(body, dict) else {}
    return (err.get("message") if isinstance(err, dict) else None) or e.message


class OpenAIProvider(Provider):
    name = "openai"

    def __init__(self, model: str, api_key: str | None = None, base_url: str | None = None,
                 timeout_s: float = 600.0, max_tokens: int = 16000, temperature: float | None = None,
                 reasoning_effort: str | None = None, supports_images: bool = True, **kw):
        super().__init__(model, **kw)
        self.base_url = base_url
        self.max_tokens, self.temperature, self.reasoning_effort = max_tokens, temperature, reasoning_effort
        self.supports_images = supports_images
        # SDK retries off: ours (base.with_retries) are visible in the round's accounting.
        self.client = openai.OpenAI(api_key=api_key or "not-needed", base_url=base_url, timeout=timeout_s,
                                    max_retries=0)

    def _wire_messages(self, messages: list[Message]) -> list[dict]:
        out = []
        for m in messages:
            if m.images and self.supports_images:
                parts = [{"type": "text", "text": m.text}]
                parts += [{"type": "image_url", "image_url": {"url": f"data:{i.mime};base64,{i.b64()}"}}
                          for i in m.images]
                out.append({"role": m.role, "content": parts})
            else:
                out.append({"role": m.role, "content": m.text})
        return out

    def _params(self) -> dict:
        if REASONING_MODEL.match(self.model):
            p = {"max_completion_tokens": self.max_tokens}
            if self.reasoning_effort:
                p["reasoning_effort"] = self.reasoning_effort
            return p
        p = {"max_tokens": self.max_tokens}
        if self.temperature is not None:
            p["temperature"] = self.temperature
        return p

    def _complete_once(self, messages: list[Message]) -> Completion:
        where = self.base_url or "api.openai.com"
        try:
            resp = self.client.chat.completions.create(model=self.model, messages=self._wire_messages(messages),
                                                       **self._params())
        except openai.APITimeoutError:
            raise RequestTimeout(f"{where}: no answer within the timeout") from None
        except openai.APIConnectionError as e:
            raise ServerError(f"cannot connect to {where}: {e.__cause__ or e}") from None
        except (openai.AuthenticationError, openai.PermissionDeniedError) as e:
            raise AuthError(f"{where} refused the API key ({e.status_code}): {_error_text(e)}. "
                            "Set OPENAI_API_KEY or the key in Settings.") from None
        except openai.NotFoundError as e:
            raise ModelNotFound(f"{where}: model {self.model!r} not found (404): {_error_text(e)}") from None
        except openai.RateLimitError as e:
            raise RateLimited(f"{where}: rate limited (429): {_error_text(e)}", _retry_after(e)) from None
        except openai.InternalServerError as e:
            raise ServerError(f"{where}: server error {e.status_code}: {_error_text(e)}") from None
        except openai.APIStatusError as e:
            text = _error_text(e)
            code = (e.body or {}).get("error", {}).get("code") if isinstance(e.body, dict) else None
            if code == "context_length_exceeded" or re.search(r"context (length|window)|maximum context|too long",
                                                               text, re.I):
                raise ContextLengthExceeded(f"{where}: the prompt is too long for {self.model}: {text}") from None
            raise LLMError(f"{where}: request rejected ({e.status_code}): {text}") from None
        if not resp.choices:
            raise LLMError(f"{where}: the answer had no choices")
        choice = resp.choices[0]
        if choice.finish_reason == "content_filter":
            raise ContentFiltered(f"{where}: the answer was withheld by the content filter")
        u = resp.usage
        usage = price_usage(self.model, getattr(u, "prompt_tokens", 0) or 0, getattr(u, "completion_tokens", 0) or 0)
        return Completion(choice.message.content or "", usage, resp.model or self.model, self.name,
                          choice.finish_reason or "")


def from_config(cfg, secrets=None, workdir=None, **extra) -> OpenAIProvider:
    from kforge_core.llm.config import api_key

    key = api_key("openai", secrets)
    if not key and not cfg.base_url:
        raise LLMError("OpenAI needs an API key: set OPENAI_API_KEY (or a base URL of a local server)")
    return OpenAIProvider(cfg.model or "gpt-4o", api_key=key, base_url=cfg.base_url, timeout_s=cfg.timeout_s,
                          max_tokens=cfg.max_tokens, temperature=cfg.temperature,
                          reasoning_effort=cfg.reasoning_effort, supports_images=cfg.supports_images,
                          max_retries=cfg.max_retries, **extra)
