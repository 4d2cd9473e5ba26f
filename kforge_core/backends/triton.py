"""Triton backend: @triton.jit kernels launched from ModelNew. On a machine with no GPU the worker runs
them with Triton's interpreter (TRITON_INTERPRET=1) on CPU tensors: correctness only, no timing."""

from __future__ import annotations

from pathlib import Path

from kforge_core.backends.base import Availability, Backend, cuda_gpu_present


class TritonBackend(Backend):
    name = "triton"
    language = "Triton (Python DSL, @triton.jit)"
    kernel_markers = (r"@triton\.jit", r"@jit\b")

    def device(self) -> str:
        return "cuda" if cuda_gpu_present() else "cpu"

    def is_interpreted(self) -> bool:
        return not cuda_gpu_present()

    def available(self) -> Availability:
        try:
            import triton  # noqa: F401
        except Exception as e:
            return Availability(False, f"triton is not installed ({type(e).__name__}); pip install triton")
        if self.is_interpreted():
            return Availability(True, "no CUDA GPU: kernels run in Triton's CPU interpreter (correctness only)")
        return Availability(True)

    def child_env(self, cache_dir: Path) -> dict[str, str]:
        env = {"TRITON_CACHE_DIR": str(cache_dir / "triton")}
        if self.is_interpreted():
            env["TRITON_INTERPRET"] = "1"
        return env
