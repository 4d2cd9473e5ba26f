"""Profile built-in problems' CUDA examples with Nsight Compute; save raw CSV and the ProfileReport.

    python -m bench.ncu_reports OUT_DIR [problem ...]
"""

import json
import sys
import time
from pathlib import Path

from kforge_core.backends import get_backend
from kforge_core.problems import resolve_problem
from profiler_adapters.ncu import NcuUnavailable, profile

DEFAULT = ["level1/1_ReLU", "level1/3_Softmax", "level1/6_LayerNorm", "level2/5_Scale_Residual_Add_Clamp"]


def main() -> int:
    out = Path(sys.argv[1])
    names = sys.argv[2:] or DEFAULT
    cuda = get_backend("cuda")
    for name in names:
        d = out / name.replace("/", "__")
        t0 = time.monotonic()
        try:
            report, _ = profile(resolve_problem(name), cuda.example_for(name).read_text(), "cuda", out_dir=d)
        except NcuUnavailable as e:
            print(f"{name}: ncu unavailable: {e}")
            continue
        text = report.render_text()
        (d / "report.txt").write_text(text)
        (d / "report.json").write_text(json.dumps({"metrics": [vars(m) for m in report.metrics],
                                                   "findings": report.findings, "kernels": report.kernels}, indent=1))
        print(f"=== {name} ({time.monotonic() - t0:.1f} s)\n{text}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
