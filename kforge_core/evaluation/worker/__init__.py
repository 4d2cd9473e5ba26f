"""The worker's stages: what runs inside the isolated child process, in order.

Owns the process entry point and its limits (`main`), loading sources and drawing inputs (`loading`), the
machine description (`environment`), the stage driver and its regions, candidate or harness (`stages`), the
trial loop (`correctness_stage`), the timing stage (`timing_stage`), the CPU-load reading that decides
threads and flags (`cpu_load`) and the cache of torch.compile timings (`reference_cache`).

May import: `building` (to build), `judging` (to check and compare) and the shared vocabulary of
`kforge_core.evaluation` (`result`, `settings`, `outcome`); never `isolation`: the child does not start
children of its own kind.
"""
