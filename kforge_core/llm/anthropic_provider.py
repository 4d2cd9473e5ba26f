"""Anthropic Messages API through the official SDK; images travel as base64 blocks."""

from __future__ import annotations

import re

import anthropic

from kforge_core.llm.base import (AuthError, Completion, ContentFiltered, ContextLengthExceeded, LLMError,
                                  Message, ModelNotFound, Provider, RateLimited, RequestTimeout, ServerError,
                                  price_usage)


def _error_text(e: anthropic.APIStatusError) -> str:
    body = e.body if isinstance(e.body, dict) else {}
    err = body.get("error", {}) if isinstance(body, dict) else {}
    return (err.get("message") if isinstance(err, dict) else None) or e.message


class AnthropicProvider(Provider):
    name = "anthropic"

    def __init__(self, model: str, api_key: str | None = None, base_url: str | None = None,
                 timeout_s: float = 600.0, max_tokens: int = 16000, temperature: float | None = None, **kw):
        super().__init__(model, **kw)
        self.base_url = base_url
        self.max_tokens, self.temperature = max_tokens, temperature
        self.client = anthropic.Anthropic(api_key=api_key or "missing", base_url=base_url, timeout=timeout_s,
                                          max_retries=0)

    @staticmethod
    def _wire_messages(messages: list[Message]) -> tuple[str, list[dict]]:
        system = "\n\n".join(m.text for m in messages if m.role == "system")
        out = []
        for m in messages:
            if m.role == "system":
                continue
            blocks = [{"type": "image", "source": {"type": "base64", "media_type": i.mime, "data": i.b64()}}
                      for i in m.images]
            blocks.append({"type": "text", "text": m.text})
            out.append({"role": m.role, "content": blocks})
        return system, out

    def _complete_once(self, messages: list[Message]) -> Completion:
        where = self.base_url or "api.anthropic.com"
        system, wire = self._wire_messages(messages)
        params = {"model": self.model, "max_tokens": self.max_tokens, "messages": wire}
        if system:
            params["system"] = system
        if self.temperature is not None:
            params["temperature"] = self.temperature
        try:
            resp = self.client.messages.create(**params)
        except anthropic.APITimeoutError:
            raise RequestTimeout(f"{where}: no answer within the timeout") from None
        except anthropic.APIConnectionError as e:
            raise ServerError(f"cannot connect to {where}: {e.__cause__ or e}") from None
        except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as e:
            raise AuthError(f"{where} refused the API key ({e.status_code}): {_error_text(e)}. "
                            "Set ANTHROPIC_API_KEY or the key in Settings.") from None
        except anthropic.NotFoundError as e:
            raise ModelNotFound(f"{where}: model {self.model!r} not found (404): {_error_text(e)}") from None
        except anthropic.RateLimitError as e:
            ra = e.response.headers.get("retry-after") if e.response is not None else None
            raise RateLimited(f"{where}: rate limited (429): {_error_text(e)}",
                              float(ra) if ra and ra.replace(".", "", 1).isdigit() else None) from None
        except anthropic.InternalServerError as e:
            raise ServerError(f"{where}: server error {e.status_code}: {_error_text(e)}") from None
        except anthropic.APIStatusError as e:
            text = _error_text(e)
            if e.status_code in (529,) or e.status_code >= 500:
                raise ServerError(f"{where}: server error {e.status_code}: {text}") from None
            if re.search(r"prompt is too long|context (length|window)|too many tokens", text, re.I):
                raise ContextLengthExceeded(f"{where}: the prompt is too long for {self.model}: {text}") from None
            raise LLMError(f"{where}: request rejected ({e.status_code}): {text}") from None
        if resp.stop_reason == "refusal":
            raise ContentFiltered(f"{where}: the model refused to answer")
        text = "".join(getattr(b, "text", "") for b in resp.content if getattr(b, "type", "") == "text")
        usage = price_usage(self.model, resp.usage.input_tokens or 0, resp.usage.output_tokens or 0)
        return Completion(text, usage, resp.model or self.model, self.name, resp.stop_reason or "")


def from_config(cfg, secrets=None, workdir=None, **extra) -> AnthropicProvider:
    from kforge_core.llm.config import api_key

    key = api_key("anthropic", secrets)
    if not key and not cfg.base_url:
        raise LLMError("Anthropic needs an API key: set ANTHROPIC_API_KEY")
    return AnthropicProvider(cfg.model or "claude-sonnet-4-6", api_key=key, base_url=cfg.base_url,
                             timeout_s=cfg.timeout_s, max_tokens=cfg.max_tokens, temperature=cfg.temperature,
                             max_retries=cfg.max_retries, **extra)
