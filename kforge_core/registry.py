"""Name -> object registries for plug-ins (backends, LLM providers), imported lazily.

A name is looked up in the built-in table ("short name" -> "module:attribute"), then in the installed
packages' entry points of the registry's group (a third-party package declares, e.g. in pyproject.toml,
[project.entry-points."kforge.backends"] rocm = "kforge_rocm:RocmBackend"), and a name holding a ":" is
taken as a "module:attribute" path itself. A new backend or provider is one new file plus one line here or
in its own package's metadata.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points


class Registry:
    def __init__(self, what: str, group: str, builtins: dict[str, str]):
        self.what, self.group, self.builtins = what, group, dict(builtins)

    def _entry_points(self) -> dict[str, str]:
        try:
            return {ep.name: ep.value for ep in entry_points(group=self.group)}
        except Exception:  # broken package metadata must not take the built-ins down
            return {}

    def names(self) -> list[str]:
        return list(self.builtins) + [n for n in self._entry_points() if n not in self.builtins]

    def target(self, name: str) -> str:
        found = self.builtins.get(name) or self._entry_points().get(name)
        if found:
            return found
        if ":" in name:
            return name
        raise KeyError(f"unknown {self.what} {name!r}; known: {', '.join(self.names())}")

    def load(self, name: str):
        module, _, attr = self.target(name).partition(":")
        try:
            obj = importlib.import_module(module)
            for part in attr.split(".") if attr else []:
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as e:
            raise KeyError(f"{self.what} {name!r}: cannot load {self.target(name)} ({e})") from None
        return obj
