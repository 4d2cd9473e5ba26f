"""CUDA example sources compile (and load) wherever the CUDA build of torch and nvcc exist, GPU or not."""

import os
import subprocess
import sys

import pytest

from kforge_core.backends import get_backend
from kforge_core.backends.cuda import nvcc_path

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(
    torch.version.cuda is None or nvcc_path() is None,
    reason=f"needs the CUDA build of torch and nvcc (torch {torch.__version__}, nvcc {nvcc_path()}); "
           "CI installs the small CPU build, so the CUDA build path is exercised on the device machine")

CUDA = get_backend("cuda")


@pytest.mark.parametrize("name", CUDA.example_problems())
def test_cuda_example_compiles_and_loads(name, kforge_cache):
    env = {**os.environ, **CUDA.child_env(kforge_cache)}
    env.setdefault("TORCH_CUDA_ARCH_LIST", "9.0a")
    p = subprocess.run([sys.executable, "-c", "import runpy, sys; runpy.run_path(sys.argv[1])",
                        str(CUDA.example_for(name))], env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
