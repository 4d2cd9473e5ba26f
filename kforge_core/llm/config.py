"""Provider configuration (storable: holds no secrets) and construction with keys from the environment
or from secrets the caller passes in (the app passes st.secrets)."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Mapping

from kforge_core.llm.base import LLMError, Provider

KEY_VARS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
KINDS = ("openai", "anthropic", "manual", "scripted")


@dataclass
class ProviderConfig:
    kind: str = "scripted"
    model: str = ""
    base_url: str | None = None
    timeout_s: float = 600.0
    max_tokens: int = 16000
    temperature: float | None = None
    reasoning_effort: str | None = None  # OpenAI reasoning models: low / medium / high
    max_retries: int = 4
    supports_images: bool = True
    scripted_path: str | None = None
    scripted_role: str | None = None  # a file of {"generation": [...], "analysis": [...]}: which list to replay
    manual_dir: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ProviderConfig":
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


def api_key(kind: str, secrets: Mapping | None = None) -> str | None:
    var = KEY_VARS.get(kind)
    if not var:
        return None
    if secrets:
        try:
            if secrets.get(var):
                return str(secrets.get(var))
        except Exception:  # st.secrets raises when no secrets file exists
            pass
    return os.environ.get(var) or None


def mask(key: str | None) -> str:
    if not key:
        return "not set"
    return f"{key[:3]}…{key[-4:]}" if len(key) > 12 else "set (short)"


def make_provider(cfg: ProviderConfig, secrets: Mapping | None = None, **extra) -> Provider:
    if cfg.kind == "openai":
        from kforge_core.llm.openai_provider import OpenAIProvider

        key = api_key("openai", secrets)
        if not key and not cfg.base_url:
            raise LLMError("OpenAI needs an API key: set OPENAI_API_KEY (or a base URL of a local server)")
        return OpenAIProvider(cfg.model or "gpt-4o", api_key=key, base_url=cfg.base_url, timeout_s=cfg.timeout_s,
                              max_tokens=cfg.max_tokens, temperature=cfg.temperature,
                              reasoning_effort=cfg.reasoning_effort, supports_images=cfg.supports_images,
                              max_retries=cfg.max_retries, **extra)
    if cfg.kind == "anthropic":
        from kforge_core.llm.anthropic_provider import AnthropicProvider

        key = api_key("anthropic", secrets)
        if not key and not cfg.base_url:
            raise LLMError("Anthropic needs an API key: set ANTHROPIC_API_KEY")
        return AnthropicProvider(cfg.model or "claude-sonnet-4-6", api_key=key, base_url=cfg.base_url,
                                 timeout_s=cfg.timeout_s, max_tokens=cfg.max_tokens, temperature=cfg.temperature,
                                 max_retries=cfg.max_retries, **extra)
    if cfg.kind == "scripted":
        from kforge_core.llm.offline import ScriptedProvider

        if not cfg.scripted_path:
            raise LLMError("the scripted provider needs a file of answers")
        return ScriptedProvider.from_file(cfg.scripted_path, cfg.scripted_role)
    if cfg.kind == "manual":
        from kforge_core.llm.offline import ManualProvider

        return ManualProvider(prompt_dir=cfg.manual_dir, **extra)
    raise LLMError(f"unknown provider kind {cfg.kind!r}; known: {', '.join(KINDS)}")
