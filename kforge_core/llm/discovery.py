"""Find OpenAI-compatible model servers running on this machine (vLLM, SGLang, Ollama, LM Studio,
llama.cpp server) by asking each usual port for /v1/models."""

from __future__ import annotations

import json
import urllib.request

KNOWN_PORTS = {8000: "vLLM", 30000: "SGLang", 11434: "Ollama", 1234: "LM Studio", 8080: "llama.cpp server"}


def probe(base_url: str, timeout_s: float = 0.5) -> list[str] | None:
    """Model ids served at base_url (ending in /v1), or None when nothing answers there."""
    try:
        with urllib.request.urlopen(base_url.rstrip("/") + "/models", timeout=timeout_s) as r:
            data = json.loads(r.read().decode("utf-8", "replace"))
    except (OSError, ValueError):
        return None
    items = data.get("data", []) if isinstance(data, dict) else []
    return [str(m.get("id")) for m in items if isinstance(m, dict) and m.get("id")]


def discover(host: str = "127.0.0.1", ports: dict[int, str] | None = None) -> list[dict]:
    found = []
    for port, name in (ports or KNOWN_PORTS).items():
        url = f"http://{host}:{port}/v1"
        models = probe(url)
        if models is not None:
            found.append({"server": name, "base_url": url, "models": models})
    return found
