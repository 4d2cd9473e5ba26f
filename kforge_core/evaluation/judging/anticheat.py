"""Runtime checks that keep a candidate from passing by gaming the harness instead of computing.

Each function is small and pure; worker.py decides when to call them. Every check has an adversarial
candidate under tests/adversarial/cases/ that tries the trick it stops.
"""

from __future__ import annotations

from collections import Counter

import torch

from kforge_core.evaluation.judging.correctness import flatten

# Operators that move, view or allocate data: a custom kernel's wrapper may call them freely.
SUPPORT_OPS = {
    "aten::empty", "aten::empty_like", "aten::empty_strided", "aten::new_empty", "aten::new_empty_strided",
    "aten::zeros", "aten::zeros_like", "aten::ones", "aten::ones_like", "aten::full", "aten::new_zeros",
    "aten::contiguous", "aten::clone", "aten::copy_", "aten::view", "aten::reshape", "aten::_reshape_alias",
    "aten::as_strided", "aten::expand", "aten::to", "aten::_to_copy", "aten::detach", "aten::detach_",
    "aten::lift_fresh", "aten::resolve_conj", "aten::resolve_neg", "aten::t", "aten::transpose", "aten::permute",
    "aten::select", "aten::slice", "aten::narrow", "aten::unsqueeze", "aten::squeeze", "aten::flatten",
    "aten::split", "aten::chunk", "aten::unbind", "aten::item", "aten::_local_scalar_dense", "aten::fill_",
    "aten::zero_", "aten::result_type", "aten::alias", "aten::set_", "aten::is_nonzero", "aten::size",
    "aten::stride", "aten::numel", "aten::dim", "aten::is_contiguous", "aten::view_as", "aten::expand_as",
    "aten::unflatten", "aten::_unsafe_view", "aten::record_stream",
}


def tensors(obj) -> list[tuple[str, torch.Tensor]]:
    return [(p, t) for p, t in flatten(obj, "input") if isinstance(t, torch.Tensor)]


def _storages(obj) -> dict[int, str]:
    out = {}
    for p, t in tensors(obj):
        if t.numel():
            out[t.untyped_storage().data_ptr()] = p
    return out


def aliased(outputs, inputs) -> list[str]:
    """Outputs that share memory with an input."""
    ins = _storages(inputs)
    return [f"{p} aliases {ins[ptr]}" for ptr, p in _storages(outputs).items() if ptr in ins]


def poison_free_memory(device: torch.device, nbytes: int) -> None:
    """Fill memory the allocator will hand out next with NaNs, so an output the candidate never writes
    cannot happen to hold a previous result's bytes."""
    n = max(nbytes // 4, 1 << 16)
    block = torch.empty(n, dtype=torch.float32, device=device)
    block.fill_(float("nan"))
    del block


def output_bytes_hint(ref_outputs) -> int:
    return sum(t.numel() * t.element_size() for _, t in tensors(ref_outputs))


def aten_ops(fn) -> Counter:
    """The PyTorch operators a call dispatches, from Python or from C++ (an extension calling at::), as
    "aten::name" -> calls (instances, not just names: a network that replaced some of its ReLUs still runs
    the others). Recorded by a dispatch mode: starting torch.profiler costs ~4 s on a GPU machine (measured
    on an H200), most of a warm verdict. Where a mode cannot run the call, the CPU-side profiler does."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Recorder(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops: Counter = Counter()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops[func._schema.name] += 1
            return func(*args, **(kwargs or {}))

    try:
        with Recorder() as rec:
            fn()
        return Counter({op: n for op, n in rec.ops.items() if op.startswith("aten::")})
    except Exception:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU]) as prof:
            fn()
        return Counter({e.key: e.count for e in prof.key_averages() if e.key.startswith("aten::")})


def fallback_violation(reference_ops: Counter, candidate_ops: Counter) -> str | None:
    """The candidate fell back to PyTorch if it still runs every compute operator instance the reference
    runs (as many calls of each): replacing some instances of an operator is replacing work."""
    compute = {op: n for op, n in reference_ops.items() if op not in SUPPORT_OPS and n > 0}
    if compute and all(candidate_ops.get(op, 0) >= n for op, n in compute.items()):
        return ("the candidate runs every instance of the reference's own PyTorch operators (" +
                ", ".join(f"{op} x{n}" for op, n in sorted(compute.items())) +
                ") instead of replacing any with a custom kernel")
    return None


def roofline_ms(input_and_output_bytes: int, bandwidth_bytes_per_s: float) -> float:
    return input_and_output_bytes / bandwidth_bytes_per_s * 1e3


def measure_copy_bandwidth(device: torch.device) -> float:
    """Device-to-device copy bandwidth (bytes read + written per second), the memory roofline's slope."""
    n = 256 << 20
    a = torch.empty(n // 4, dtype=torch.float32, device=device)
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        b.copy_(a)
    end.record()
    torch.cuda.synchronize()
    return 2 * n * 10 / (start.elapsed_time(end) / 1e3)
