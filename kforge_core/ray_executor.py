"""Ray placement: every evaluation is a Ray task holding one GPU (or one CPU slot for the CPU backend),
every ahead-of-time build a task holding one CPU, so Ray overlaps compiles with evaluations across the
cluster. Ray is optional: `pip install ray`.
"""

from __future__ import annotations

from kforge_core.executors import Executor


# A custom resource, one per node, that CPU-backend evaluations hold: their timings do not share the node's
# cores with another evaluation. Local instances get it; cluster nodes: ray start --resources='{"kforge_cpu_timing": 1}'
CPU_TIMING_SLOT = "kforge_cpu_timing"


class RayUnavailable(RuntimeError):
    pass


class RayExecutor(Executor):
    name = "ray"

    def __init__(self, address: str = "auto", backend: str = "cpu", num_cpus: int | None = None):
        """address: "auto" joins a running cluster or starts a local instance; "local" always starts one;
        anything else is a cluster address (ray://host:10001 or host:6379)."""
        try:
            import ray
        except ImportError:
            raise RayUnavailable("Ray is not installed here: pip install ray") from None
        from kforge_core.backends import get_backend

        self.ray = ray
        if not ray.is_initialized():
            kw = {"include_dashboard": False, "log_to_driver": False, "ignore_reinit_error": True}
            local = {"num_cpus": num_cpus, "resources": {CPU_TIMING_SLOT: 1}}
            if address == "local":
                ray.init(**local, **kw)
            elif address == "auto":
                try:
                    ray.init(address="auto", **kw)
                except (ConnectionError, RuntimeError):  # no cluster running: a local instance
                    ray.init(**local, **kw)
            else:
                import kforge_core
                import profiler_adapters

                # Remote nodes get this checkout's code with the tasks (they still need torch and a compiler).
                ray.init(address=address, runtime_env={"py_modules": [kforge_core, profiler_adapters]}, **kw)
        self.split_build = get_backend(backend).device() == "cuda"
        if self.split_build:
            device_opts = {"num_gpus": 1, "num_cpus": 1}  # one GPU per evaluation; builds on the other CPUs
        else:
            # CPU timings: one evaluation per node at a time and no builds beside it (as the local pool does):
            # the node's timing slot, where nodes offer it, else all of one node's CPUs.
            res = ray.cluster_resources()
            device_opts = ({"num_cpus": 1, "resources": {CPU_TIMING_SLOT: 1}} if CPU_TIMING_SLOT in res else
                           {"num_cpus": max(1, int(min(n["Resources"].get("CPU", 1) for n in ray.nodes()
                                                       if n.get("Alive"))))})
        self._build = ray.remote(num_cpus=1, max_retries=0)(_run)
        self._device = ray.remote(max_retries=0, **device_opts)(_run)

    def on_cpu(self, fn, *args):
        return self.ray.get(self._build.remote(fn, *args))

    def on_device(self, fn, *args):
        return self.ray.get(self._device.remote(fn, *args))

    def describe(self) -> str:
        r = self.ray.cluster_resources()
        return (f"Ray cluster: {len(self.ray.nodes())} node(s), {r.get('CPU', 0):g} CPUs, "
                f"{r.get('GPU', 0):g} GPUs")

    def close(self) -> None:
        self.ray.shutdown()


def _run(fn, *args):
    return fn(*args)

