"""A spare worker: a process that has already paid for `import torch` and waits for one job.

    python -m kforge_core.evaluation.isolation.spare        (started by sandbox.py, never by hand)

It reads one JSON line from stdin: {"jobdir", "env", "module"}, takes the job's environment, folder and
output files, and runs the worker module as `python -m MODULE JOBDIR` would. The sandbox treats it like a
freshly started worker (own session, deadlines, memory watchdog, killed with its session afterwards); it
serves one job only. If its parent goes away, stdin closes and it exits.
"""

from __future__ import annotations

import json
import os
import runpy
import sys

ALLOWED = ("kforge_core.", "profiler_adapters.")
GPU_WORKER_VAR = "KFORGE_GPU_WORKER"  # "1": the job runs on the GPU, so make the CUDA context ahead


def main() -> None:
    # The point of a spare: these imports are done before the job arrives. torch._dynamo is what the
    # anti-cheat dispatch mode and torch.compile pull in (1.5-4 s); it imports triton, whose interpreter
    # switch (TRITON_INTERPRET) is read at import: sandbox.py keeps spares per value of that switch.
    import torch  # noqa: F401
    import torch._dynamo  # noqa: F401

    if os.environ.get(GPU_WORKER_VAR) == "1" and torch.cuda.is_available():
        torch.empty(1, device="cuda")  # the CUDA context: 0.5-1 s of every GPU verdict, paid while idle
    ready = os.environ.get("KFORGE_SPARE_READY_FILE")
    if ready:
        open(ready, "w").close()
    line = sys.stdin.readline()
    if not line.strip():
        os._exit(0)
    msg = json.loads(line)
    if not msg["module"].startswith(ALLOWED):
        os._exit(2)
    os.environ.clear()
    os.environ.update(msg["env"], KFORGE_SPARE_WORKER="1")
    for entry in reversed(os.environ.get("PYTHONPATH", "").split(os.pathsep)):
        if entry and entry not in sys.path:
            sys.path.insert(0, entry)
    threads = os.environ.get("OMP_NUM_THREADS")
    if threads and threads.isdigit():
        torch.set_num_threads(int(threads))  # OpenMP read the variable at import, before the job existed
    os.chdir(msg["jobdir"])
    for fd, name in ((1, "stdout.txt"), (2, "stderr.txt")):
        f = os.open(os.path.join(msg["jobdir"], name), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(f, fd)
        os.close(f)
    sys.argv = [msg["module"], msg["jobdir"]]
    runpy.run_module(msg["module"], run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
