"""Find the builds a source starts, wherever it starts them: at import, or in ModelNew.__init__.

Used ahead of the GPU stage (a build worker, the CLI): importing a program runs its module-level
`load_inline` calls, but about half of real LLM sources call it in `ModelNew.__init__`, where only
constructing the model reaches it. `record_builds` runs both with `load_inline` replaced by a recorder, so the
calls (and their arguments) are known without building anything."""

from __future__ import annotations

import contextlib
import types


class _Stub(types.ModuleType):
    """What a recorded load_inline returns: any attribute is a function that does nothing."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *a, **k: None


@contextlib.contextmanager
def recording():
    """Inside, torch.utils.cpp_extension.load_inline records its keyword arguments and builds nothing."""
    from torch.utils import cpp_extension as ce

    calls: list[dict] = []
    original = ce.load_inline

    def record(name, cpp_sources, cuda_sources=None, *args, **kwargs):
        calls.append({"name": name, "cpp_sources": cpp_sources, "cuda_sources": cuda_sources, **kwargs,
                      **({"positional": list(args)} if args else {})})
        return _Stub(str(name))

    ce.load_inline = record
    try:
        yield calls
    finally:
        ce.load_inline = original


def record_builds(source: str, filename: str, init_inputs=None) -> list[dict]:
    """The load_inline calls of a program at import and (when init_inputs is given) in ModelNew(*init_inputs).
    A failure after the calls (a stub used as a real kernel, a CUDA tensor on a machine without one) ends the
    search, not the caller."""
    with recording() as calls:
        namespace = {"__name__": "kforge_recorded", "__file__": filename}
        try:
            exec(compile(source, filename, "exec"), namespace)
        except Exception:
            return calls
        model_new = namespace.get("ModelNew")
        if init_inputs is not None and isinstance(model_new, type):
            with contextlib.suppress(Exception):
                model_new(*init_inputs)
    return calls
