"""Provider configuration (storable: holds no secrets) and construction with keys from the environment
or from secrets the caller passes in (the app passes st.secrets)."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Mapping

from kforge_core.llm.base import LLMError, Provider
from kforge_core.registry import Registry

KEY_VARS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}  # shown on the Settings page
PROVIDERS = Registry("provider kind", "kforge.providers", {
    "openai": "kforge_core.llm.openai_provider:from_config",  # also any OpenAI-compatible base_url
    "anthropic": "kforge_core.llm.anthropic_provider:from_config",
    "manual": "kforge_core.llm.offline:manual_from_config",
    "scripted": "kforge_core.llm.offline:scripted_from_config",
})
KINDS = tuple(PROVIDERS.builtins)


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
    """The provider of `cfg.kind`, from the registry: each provider module has a from_config(cfg, secrets,
    **extra); `extra` may hold workdir (a folder of the run for this role) and whatever the kind takes."""
    try:
        factory = PROVIDERS.load(cfg.kind)
    except KeyError as e:
        raise LLMError(str(e.args[0])) from None
    return factory(cfg, secrets, **extra)
