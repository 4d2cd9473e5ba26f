"""What a target backend must say about itself. The evaluator and the agents only talk to this."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from kforge_core import ASSETS_DIR


@dataclass(frozen=True)
class Availability:
    ok: bool
    reason: str = ""


@functools.lru_cache(maxsize=1)
def cuda_gpu_present() -> bool:
    """Whether torch sees a CUDA GPU (cached: asked once per process)."""
    try:
        import torch

        return torch.version.cuda is not None and torch.cuda.is_available()
    except Exception:
        return False


class Backend:
    name: str = ""
    language: str = ""
    # Regexes, any of which shows the program builds a kernel of this backend (static check).
    kernel_markers: tuple[str, ...] = ()
    # Markdown fence tag of the kernel language, for prompts showing this backend's code.
    code_tag: str = "python"
    # Whether a program's kernels can be compiled on a machine without the accelerator, ahead of its
    # evaluation (C++ / CUDA extensions); Triton and Metal compile when the kernel first runs.
    builds_ahead: bool = False

    def available(self) -> Availability:
        raise NotImplementedError

    def device(self) -> str:
        """The torch device the problem's inputs and models move to."""
        return "cpu"

    def is_interpreted(self) -> bool:
        """Correctness only, no timing (e.g. Triton's CPU interpreter)."""
        return False

    @property
    def address_space_limit(self) -> bool:
        # RLIMIT_AS can bound memory only where the runtime does not reserve huge address ranges (CUDA does).
        return self.device() == "cpu"

    def child_env(self, cache_dir: Path) -> dict[str, str]:
        """Environment variables for the evaluation worker (build caches, interpreter switches)."""
        return {}

    @property
    def examples_dir(self) -> Path:
        return ASSETS_DIR / "examples" / self.name

    def example_for(self, problem_name: str) -> Path | None:
        p = self.examples_dir / f"{problem_name}.py"
        return p if p.exists() else None

    def example_problems(self) -> list[str]:
        return sorted(p.relative_to(self.examples_dir).with_suffix("").as_posix()
                      for p in self.examples_dir.rglob("*.py"))

    def uses_custom_kernel(self, source: str) -> bool:
        return any(re.search(m, source) for m in self.kernel_markers)
