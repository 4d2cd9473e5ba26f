"""Jinja2 prompt templates: plain files under kforge_core/prompts/ that a user can read and edit. A user
folder (KFORGE_PROMPTS_DIR or an explicit path) overrides any template by name."""

from __future__ import annotations

import os
from pathlib import Path

import jinja2

BUILTIN_DIR = Path(__file__).resolve().parent.parent / "prompts"


class PromptLibrary:
    def __init__(self, override_dir: str | Path | None = None):
        override_dir = override_dir or os.environ.get("KFORGE_PROMPTS_DIR")
        loaders = [jinja2.FileSystemLoader(str(override_dir))] if override_dir else []
        loaders.append(jinja2.FileSystemLoader(str(BUILTIN_DIR)))
        self.env = jinja2.Environment(loader=jinja2.ChoiceLoader(loaders), undefined=jinja2.StrictUndefined,
                                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                                      autoescape=False)

    def render(self, name: str, **ctx) -> str:
        text = self.env.get_template(name).render(**ctx)
        return "\n".join(line.rstrip() for line in text.strip().splitlines()) + "\n"

    @staticmethod
    def template_names() -> list[str]:
        return sorted(p.relative_to(BUILTIN_DIR).as_posix() for p in BUILTIN_DIR.rglob("*.j2"))
