"""Peak resident memory of the harness's correctness stage vs the reference's own run, each in a fresh
process (run by tests/test_harness.py):  python tests/harness_memory_probe.py MODE JOBDIR
MODE "reference": one reference call; "correctness": the whole correctness stage (3 trials, checks on).
Prints the growth of the process's peak RSS (VmHWM, reset after setting up) in MiB."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def status_mib(field: str) -> float:
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def reset_peak() -> float:
    """Reset the peak-RSS mark (VmHWM) to the current RSS and return that: ru_maxrss cannot be reset, so an
    earlier peak (imports, the build) would hide what is measured after it."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return status_mib("VmRSS")


def main() -> None:
    import torch

    from kforge_core.evaluation.worker.stages import Evaluation
    from kforge_core.evaluation.worker.main import EventLog

    mode, jobdir = sys.argv[1], Path(sys.argv[2])
    torch.set_num_threads(1)
    ev = Evaluation(json.loads((jobdir / "job.json").read_text()), jobdir, EventLog(jobdir / "events.jsonl"))
    ref = ev.load_problem()
    model_new = ev.build()
    device = torch.device("cpu")
    torch.relu(torch.ones(16))  # warm the op path before the baseline reading
    base = reset_peak()
    if mode == "reference":
        init, inputs = ev.make_case(ref, 42)
        ev.run_reference(ev.make_reference(ref, init, 42, device), inputs)
    else:
        ev.correctness(ref, model_new, device, lambda: None)
    print(json.dumps({"growth_mib": status_mib("VmHWM") - base}))


if __name__ == "__main__":
    main()
