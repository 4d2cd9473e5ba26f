import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


@pytest.fixture(scope="session", autouse=True)
def kforge_cache(tmp_path_factory):
    """One build cache per test session: hermetic, yet each distinct C++ source compiles only once.
    KFORGE_TEST_CACHE_DIR names a shared one instead (the device: builds prewarmed by tests/gpu/prewarm.py)."""
    shared = os.environ.get("KFORGE_TEST_CACHE_DIR")
    d = Path(shared) if shared else tmp_path_factory.mktemp("kforge-cache")
    os.environ["KFORGE_CACHE_DIR"] = str(d)
    yield d


def gpu_available() -> bool:
    try:
        import torch
        return torch.cuda.is_available()
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU on this machine (GPU tests run on the device machine)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
