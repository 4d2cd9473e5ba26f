"""Backends and providers come from registries: a new one is one file plus one line (or an entry point, or
a "module:attribute" name), and nothing special-cases the built-in ones."""

import sys

import pytest

from kforge_core.backends import BACKENDS, UnknownBackend, get_backend
from kforge_core.llm import LLMError, ProviderConfig, make_provider
from kforge_core.llm.config import PROVIDERS


def test_a_backend_from_a_module_path(tmp_path, monkeypatch):
    (tmp_path / "my_backend.py").write_text(
        "from kforge_core.backends.cpu import CpuBackend\n\n"
        "class FancyCpu(CpuBackend):\n    name = 'fancy'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    b = get_backend("my_backend:FancyCpu")
    assert b.name == "fancy" and b.available().ok
    with pytest.raises(UnknownBackend, match="cannot load"):
        get_backend("my_backend:Missing")
    with pytest.raises(UnknownBackend, match="known: cpu, cuda, triton, metal"):
        get_backend("fpga")
    sys.modules.pop("my_backend", None)


def test_a_provider_from_a_module_path_and_the_resume_hook(tmp_path, monkeypatch):
    (tmp_path / "my_provider.py").write_text(
        "from kforge_core.llm.offline import ScriptedProvider\n\n"
        "def from_config(cfg, secrets=None, workdir=None, **extra):\n"
        "    return ScriptedProvider(['a', 'b', 'c'], model=cfg.model)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    p = make_provider(ProviderConfig(kind="my_provider:from_config", model="m"))
    p.resume_after(2)
    assert p.complete([]).text == "c"
    with pytest.raises(LLMError, match="unknown provider kind 'bard'"):
        make_provider(ProviderConfig(kind="bard"))
    sys.modules.pop("my_provider", None)


def test_builtin_names_are_listed_in_order():
    assert BACKENDS.names()[:4] == ["cpu", "cuda", "triton", "metal"]
    assert PROVIDERS.names()[:4] == ["openai", "anthropic", "manual", "scripted"]
