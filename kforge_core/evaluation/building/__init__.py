"""Building a candidate: turning the source's `load_inline` calls into a loaded module, fast.

Owns the split build (`cuda_split` cuts a CUDA source into device and host parts, `torch_lite/` is the small
torch::Tensor header the host part compiles against, `lite_binding` the ctypes binding that replaces pybind11,
`split_build` compiles and links them), the fallback to `load_inline` with its speed-ups (`fast_build`) and
the reading of compiler output (`build_errors`). It runs in the worker (and in build-only workers).

May import: the standard library, torch, and the shared vocabulary of `kforge_core.evaluation` (`result`,
`settings`, `outcome`); never `judging`, `isolation` or `worker`: a build knows nothing of verdicts.
"""
