"""Checks that a timed speedup was earned (issue 18), run in the worker after the timing reps:

* calls on new inputs: the timed input tensors get new values in place before a few more timed calls. A
  result replayed from an earlier call is stale there (wrong output), and a replay keyed on the values
  shows as calls on new inputs far slower than the repeated timed calls;
* wall blocks: back-to-back calls of eager and the candidate between two events that the PARENT process
  stamps with its own clock (sandbox.py). The candidate's code never runs in that process, so whatever it
  does to the timers in its own (Python or native), the parent's seconds stand (parent_clock.py decides);
* own-kernel share: where the candidate's device time goes (its own kernels vs library and PyTorch
  kernels; on the CPU, time outside PyTorch operators), from one profiled call.
"""

from __future__ import annotations

import math
import time

from kforge_core.evaluation.outcome import Outcome
from kforge_core.evaluation.result import Verdict

WALL_BLOCKS, WALL_BLOCK_S = 4, 0.06  # per side, alternating: the parent keeps each side's fastest block, so a
# passing burst of other load (which only ever slows a block) does not count against the candidate
MAX_WALL_BLOCK_REPS = 500
CPU_SHARE_CALLS = 3  # one call's share is noisy on a busy CPU
_perf_counter = time.perf_counter  # bound before any candidate code is imported (a patch cannot reach it)
BIG_INPUTS_BYTES = 2 << 30  # above this, fewer calls on new inputs (making inputs is the slow part)
# a replayed result costs next to nothing, real work its full time; one call on new values (no reps to
# take a median of) also meets colder caches and sleeping threads: CPU up to ~2.6x seen on a 0.13 ms kernel
REPLAY = {"cuda": (2.0, 0.05), "cpu": (3.0, 0.1)}  # (factor, margin ms) over the timed reps' median
# On the CPU an honest kernel's new-value calls were once seen 3.8x slower than its timed reps with nothing
# flagged (a worker importing torch beside it on 2 cores): between REPLAY and this, the finding is a flag (the
# speedup is not counted); a replay saves far more than that (shipped case 42: ~30x)
REPLAY_REJECT_CPU = (10.0, 0.5)
LATENCY_PROBES = 5
AFTER_LAUNCH_FACTOR, AFTER_LAUNCH_MARGIN_MS = 1.5, 0.02  # device time after return vs the timed stream's
MAX_DISTURBED_PAIRS = 4  # pairs whose old-value call was slow too (other load): no evidence, up to 4 more tries


# What the timing and the checks rest on, by name: each must still be the object it was before the candidate
# was imported (honesty.guarded_now at worker start; checked after timing). Bound references in timing.py
# already ignore a patch; this says that one was tried.
GUARDED = ("time.perf_counter", "time.perf_counter_ns", "time.monotonic", "time.time", "statistics.median",
           "statistics.quantiles", "statistics.fmean", "statistics.pstdev", "torch.cuda.synchronize",
           "torch.cuda.Event.elapsed_time", "torch.cuda.Event.record", "torch.cuda.Event.synchronize",
           "torch.allclose", "torch.isclose", "torch.Tensor.copy_", "torch.Tensor.__eq__")


def guarded_now() -> dict[str, object]:
    import importlib

    found = {}
    for name in GUARDED:
        module, *attrs = name.split(".", 1)[0], *name.split(".")[1:]
        try:
            obj = importlib.import_module(module)
            for a in attrs:
                obj = getattr(obj, a)
        except Exception:
            obj = None
        found[name] = obj
    return found


class HonestyChecks:
    def check_guarded(self, before: dict[str, object]) -> None:
        after = guarded_now()
        changed = [n for n in GUARDED if after.get(n) is not before.get(n)]
        if changed:
            raise Outcome(Verdict.REJECTED, "the program replaced what the harness measures and checks with: "
                                            + ", ".join(changed) + " (patched after the harness started)")

    def calls_on_new_inputs(self, ref, ref_model, cand_model, inputs, seed, device, sync, clock, cand_stats) -> None:
        """Timed candidate calls after the inputs got new values in place (same storage, same objects)."""
        from kforge_core.evaluation.judging import anticheat as AC
        from kforge_core.evaluation.judging.correctness import validate_output

        held = {}

        def call():
            held["out"] = cand_model(*inputs)

        with self.candidate_code("ModelNew.forward (calls on new inputs)"):
            if hasattr(clock, "prepare"):
                clock.prepare(call)  # the same head start as the timed reps had
        in_bytes = sum(t.numel() * t.element_size() for _, t in AC.tensors(inputs))
        factor, margin = REPLAY["cuda" if device.type == "cuda" else "cpu"]
        # The fast quartile of the timed reps, not their median: a candidate that skips every other call on
        # unchanged inputs (batch and skip) moves the median halfway and its q1 all the way, while an honest
        # kernel's q1 is within a few per cent of its median.
        base_ms = min(cand_stats.q1_ms or cand_stats.median_ms, cand_stats.median_ms)
        limit = factor * base_ms + margin
        fresh_ms, disturbed = [], 0
        # Each call on new values follows timed calls on the old ones, the last of which should take what the
        # timed reps took. A replay makes every new-value call slow beside a fast old-value call; other load on
        # the machine makes the old-value call slow too, and such a pair is no evidence either way. Pairs
        # continue while every clean one so far was slow: 2 to 4 clean pairs (1 to 2 above 2 GiB of inputs).
        # One or two old-value calls, alternately, so a candidate that counts its calls cannot keep its real
        # work on the old-value calls and its skips elsewhere.
        fewest, most = (1, 2) if in_bytes > BIG_INPUTS_BYTES else (2, 4)
        for k in range(most + MAX_DISTURBED_PAIRS):
            if len(fresh_ms) >= most or (len(fresh_ms) >= fewest and min(fresh_ms) <= limit) \
                    or disturbed >= MAX_DISTURBED_PAIRS:
                break
            fresh = [f.to(t.device) for (_, t), (_, f) in zip(AC.tensors(inputs), AC.tensors(
                self.make_case(ref, seed + 1 + k)[1]))]
            with self.candidate_code("after timing, ModelNew.forward on new inputs"):
                # the old values first, so the new-value call finds the allocator, caches and threads as the
                # timed reps did: between the two, only the copy of the new values
                for _ in range(1 + k % 2):
                    old_ms = clock.time_once(call)
                    held.pop("out")
                sync()
                for (_, t), f in zip(AC.tensors(inputs), fresh):
                    t.copy_(f)
                new_ms = clock.time_once(call)
                sync()
            del fresh
            bad = validate_output(held["out"], device)
            if bad:
                raise Outcome(Verdict.REJECTED, f"after timing: {bad}")
            c = self.compare_outputs(ref_model, inputs, self.run_reference(ref_model, inputs), held.pop("out"))
            if not c.passed:
                raise Outcome(Verdict.REJECTED, "result replay: after timing, the timed input tensors were given new "
                                                "values in place and the output no longer matches "
                                                f"({c.message or 'structure changed'}): the output of an earlier call "
                                                "was returned")
            if old_ms > limit:
                disturbed += 1
            else:
                fresh_ms.append(new_ms)
        if not fresh_ms:
            self.flags.append(f"replay unchecked: {disturbed} calls on the timed inputs after timing took over "
                              f"{limit:.3f} ms (the timed reps: {base_ms:.3f} ms, lower quartile), so calls on new "
                              "values could not be compared with them (other load on the machine?); the speedup is "
                              "not counted")
            return
        seen = (f"calls on new input values take {min(fresh_ms):.3f} ms, the timed calls on repeated inputs "
                f"{base_ms:.3f} ms (lower quartile, and as fast again right before each new-value call)")
        f, m = REPLAY_REJECT_CPU if device.type != "cuda" else (factor, margin)
        if min(fresh_ms) > f * base_ms + m:  # delays are one-sided noise: the fastest clean pair decides
            raise Outcome(Verdict.REJECTED, f"result replay: {seen}: results of earlier calls were reused instead "
                                            "of computed")
        if min(fresh_ms) > limit:
            self.flags.append(f"replay suspected: {seen}; too small a gap to reject on a CPU that may be shared, "
                              "so the speedup is not counted")
            return
        self.timing_notes.append(f"calls on new input values: {min(fresh_ms):.3f} ms (timed reps: "
                                 f"{cand_stats.median_ms:.3f} ms)")

    def device_work_after_launch(self, fn, sync, stats) -> None:
        """CUDA: calls from an idle GPU with no head start, timed by the guarded host clock from the moment the
        call returns to the moment the whole device (every stream) is idle. Work a call launched runs then or
        earlier, so this cannot exceed the timed stream's own time unless work ran elsewhere: on a side stream
        during the timed reps' head start, where the events never see it. The figure then becomes that time."""
        idle = []
        for _ in range(5):
            sync()
            t0 = _perf_counter()
            sync()
            idle.append(_perf_counter() - t0)
        after = []
        with self.candidate_code("during timing, the program (device work after launch)"):
            for _ in range(LATENCY_PROBES):
                sync()
                fn()
                t1 = _perf_counter()
                sync()
                after.append(max(0.0, _perf_counter() - t1 - max(idle)) * 1e3)
        seen = min(after)  # other load only ever adds
        if seen > AFTER_LAUNCH_FACTOR * stats.median_ms + AFTER_LAUNCH_MARGIN_MS:
            self.timing_notes.append(
                f"work outside the timed stream: after each call returned, the device stayed busy {seen:.3f} ms "
                f"while the timed stream's events saw {stats.median_ms:.3f} ms; the candidate's figure is that "
                "device time (work on any stream is in the figure)")
            scale = seen / max(stats.median_ms, 1e-9)
            for k in ("median_ms", "q1_ms", "q3_ms", "min_ms", "max_ms", "mean_ms", "std_ms"):
                setattr(stats, k, getattr(stats, k) * scale)

    def wall_blocks(self, fns: dict, sync) -> None:
        """Back-to-back calls of each function between two logged events the parent times with its clock."""
        per_call_s = {}
        with self.candidate_code("during timing, the program (wall blocks)"):
            for side in ("eager", "candidate"):  # sized by a clock bound before the candidate was imported, not
                t0 = _perf_counter()              # by the reported medians (a lying timer would make them huge)
                fns[side]()
                sync()
                per_call_s[side] = max(_perf_counter() - t0, 1e-6)
        for block in range(WALL_BLOCKS):
            for side in ("eager", "candidate"):
                fn = fns[side]
                reps = max(2, min(MAX_WALL_BLOCK_REPS, math.ceil(WALL_BLOCK_S / per_call_s[side])))
                sync()
                self.log.write({"wall_block": side, "block": block, "at": "start", "reps": reps})
                with self.candidate_code(f"during timing, the program ({side} wall block)"):
                    for _ in range(reps):
                        fn()
                    sync()
                self.log.write({"wall_block": side, "block": block, "at": "end", "reps": reps})

    def profile_forward(self, model, inputs, device, sync, calls: int = 1):
        """One profiled forward (several on the CPU, where one is noisy), after one unprofiled call; the trace
        and the wall microseconds of the profiled calls."""
        from torch.profiler import ProfilerActivity, profile

        model(*inputs)
        sync()
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
        with profile(activities=acts) as prof:
            t0 = _perf_counter()
            for _ in range(calls):
                model(*inputs)
            sync()
            wall_us = (_perf_counter() - t0) * 1e6
        return prof, wall_us

    def kernel_attribution(self, ref_model, cand_model, inputs, device, sync) -> tuple[float | None, dict]:
        """Own-kernel share of the candidate's time (GPU: kernels its source defines; CPU: time outside
        PyTorch operators) and the attribution of its work against the reference's (attribution.py)."""
        from kforge_core.evaluation.judging import anticheat as AC
        from kforge_core.evaluation.judging import attribution as AT
        from kforge_core.evaluation.judging import device_time as DT

        calls = 1 if device.type == "cuda" else CPU_SHARE_CALLS
        ref_prof, _ = self.profile_forward(ref_model, inputs, device, sync, calls)
        with self.candidate_code("ModelNew.forward (kernel attribution)"):
            cand_prof, wall_us = self.profile_forward(cand_model, inputs, device, sync, calls)
        ref_ops = AT.op_rows(ref_prof, device.type, AC.SUPPORT_OPS)
        cand_ops = AT.op_rows(cand_prof, device.type, AC.SUPPORT_OPS)
        if device.type == "cuda":
            with open(self.candidate_path) as f:
                own = DT.own_kernel_names(f.read())
            rows = DT.device_rows(cand_prof)
            share = DT.own_share(rows, own)
            own_us = sum(r["us"] for r in rows if DT.is_own(r["name"], own))
            attribution = AT.attribute(ref_ops, cand_ops, own_us, AT.direct_library(cand_prof, own, DT.is_own))
        else:
            share = DT.cpu_own_share(DT.cpu_op_rows(cand_prof), wall_us)
            attribution = AT.attribute(ref_ops, cand_ops, None if share is None else share * wall_us / calls)
        return share, attribution

    def judge_attribution(self, share: float | None, attribution: dict) -> None:
        """Policy on the measured attribution (settings.kernel_policy)."""
        from kforge_core.evaluation.judging import attribution as AT

        s = self.settings
        self.own_share = share
        self.attribution = {**attribution, "policy": s.kernel_policy}
        said = AT.describe(attribution)
        if attribution.get("replaced_share") == 0:
            raise Outcome(Verdict.REJECTED, "the candidate's own kernels replace none of the reference's work: every "
                                            "operator instance of the reference still runs in PyTorch or a library "
                                            f"substitute ({said})")
        if said:
            self.timing_notes.append(f"whose work: {said}")
        if s.kernel_policy != "all" or share is None or share >= s.min_own_kernel_share:
            return
        where = "device time" if self.backend.device() == "cuda" else "time (outside PyTorch operators)"
        what = (f"the candidate's own kernels ran {share:.0%} of its {where} (policy \"all own kernels\": at least "
                f"{s.min_own_kernel_share:.0%}): the rest is library or PyTorch kernels doing the work")
        if s.strictness == "strict":
            raise Outcome(Verdict.REJECTED, what)
        self.flags.append(f"low own-kernel share: {what}")
