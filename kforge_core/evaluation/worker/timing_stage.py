"""The timing stage: eager, torch.compile (measured once per problem and device) and the candidate by one
protocol, then the checks that need the timed inputs (honesty.py: calls on new inputs, wall blocks for the
parent's clock, own-kernel share; implausible speedups)."""

from __future__ import annotations

import time

from kforge_core.evaluation.judging.honesty import HonestyChecks
from kforge_core.evaluation.worker.loading import describe_exception, seeded, to_device


ROOFLINE_REJECT, ROOFLINE_FLAG = 0.7, 0.9  # of the memory floor: below 0.7 rejected, 0.7-0.9 flagged
UNSTABLE_TIMING = "unstable timing"  # the flag's opening words (EvalResult.timing_unstable looks for them)


class TimingStage(HonestyChecks):
    def timing(self, ref, model_new, device, sync) -> tuple[dict, dict]:
        import torch

        from kforge_core.evaluation.judging import timing as T

        self.log.stage("timing")
        s = self.settings
        seed = s.seed + 1000  # inputs distinct from every correctness trial
        init, inputs = self.make_case(ref, seed)
        inputs = to_device(inputs, device)
        ref_model = self.make_reference(ref, init, seed, device)
        with self.candidate_code("ModelNew(*init_inputs)"):
            cand_model = seeded(seed, lambda: model_new(*init)).to(device)
        fns = {"eager": lambda: ref_model(*inputs), "candidate": lambda: cand_model(*inputs)}
        errors = {}
        cache_key, cached = None, None
        if s.compile_reference and s.reuse_compiled_timing:
            from kforge_core.evaluation.worker import reference_cache as RC

            cache_key = RC.key(self.problem["source"], RC.device_name(device.type), s.to_dict())
            cached = RC.load(self.cache_dir, cache_key)
        if s.compile_reference and not cached:
            try:
                compiled = torch.compile(ref_model)
                t0 = time.monotonic()
                with self.timed("torch_compile_reference"):
                    compiled(*inputs)  # compile outside the timed region
                self.log.write({"compile_reference_s": round(time.monotonic() - t0, 2)})
                fns["compiled"] = lambda: compiled(*inputs)
            except Exception as e:  # an inductor failure must not sink the candidate's verdict
                errors["compiled"] = describe_exception(e, "")
        clock = T.make_clock(device.type)
        load = self.size_cpu_threads() if device.type == "cpu" else None
        with self.candidate_code("during timing, the program"):
            stats = T.measure(fns, clock, s.warmup, s.min_reps, s.max_reps, s.min_timing_s)
        if load is not None:
            self.check_cpu_load(load, "while timing")
        if cached:
            from kforge_core.evaluation.result import TimingStats

            stats["compiled"] = TimingStats(**cached["compiled"])
            drift = stats["eager"].median_ms / cached["eager"]["median_ms"]
            self.timing_notes.append(
                f"torch.compile timing reused from {time.strftime('%Y-%m-%d %H:%M', time.localtime(cached['measured_at']))}"
                f" (same problem, device and torch); eager now runs at {drift:.2f}x the time it took then")
        elif cache_key and "compiled" in stats:
            RC.save(self.cache_dir, cache_key, vars(stats["compiled"]), vars(stats["eager"]))
        if s.strictness != "off":
            if load is not None:
                load.start()  # a new window: the cross-checks below must see a quiet machine too
            if device.type == "cuda":
                self.device_work_after_launch(fns["candidate"], sync, stats["candidate"])
            self.calls_on_new_inputs(ref, ref_model, cand_model, inputs, seed, device, sync, clock, stats["candidate"])
            self.wall_blocks(fns, sync)
            if load is not None:
                self.check_cpu_load(load, "during the cross-checks after timing")
            with self.timed("kernel_attribution_profile"):
                self.judge_attribution(*self.kernel_attribution(ref_model, cand_model, inputs, device, sync))
            self.flags += self.review_flags(stats, inputs, device)
        return {k: vars(v) for k, v in stats.items()}, errors

    def size_cpu_threads(self):
        """Time with as many threads as there are cores free of other work (unless settings.threads says):
        an OpenMP team larger than the free cores waits for time slices and the timing jumps by 10-60x."""
        import torch

        from kforge_core.evaluation.worker import cpu_load

        busy = cpu_load.others_busy_now()
        if not self.settings.threads:
            threads = cpu_load.free_cores(busy)
            if threads != torch.get_num_threads():
                torch.set_num_threads(threads)
            if busy is not None and busy >= cpu_load.UNSTABLE_CORES:
                self.timing_notes.append(f"timed with {threads} thread(s): {busy:.1f} of {cpu_load.os.cpu_count()} "
                                         f"cores were busy with other work")
        return cpu_load.LoadWindow()

    def check_cpu_load(self, window, when: str) -> None:
        from kforge_core.evaluation.worker import cpu_load

        busy = window.others_busy_cores()
        if busy is not None and busy >= cpu_load.UNSTABLE_CORES and not any(
                f.startswith(UNSTABLE_TIMING) for f in self.flags):
            self.flags.append(f"{UNSTABLE_TIMING} (other load on the CPU: {busy:.1f} cores busy with other work "
                              f"on average {when}): the speedup is not reliable, evaluate again on a quiet machine")

    def review_flags(self, stats, inputs, device) -> list[str]:
        """Correct, but implausible: speedups past the review threshold (flagged), times below the memory
        roofline (rejected: no kernel moves its bytes faster than the card's measured bandwidth)."""
        from kforge_core.evaluation.judging import anticheat as AC
        from kforge_core.evaluation.worker import reference_cache as RC

        flags = []
        cand, eager = stats.get("candidate"), stats.get("eager")
        if cand and eager and cand.median_ms > 0 and eager.median_ms / cand.median_ms > self.settings.suspicious_speedup:
            flags.append(f"speedup {eager.median_ms / cand.median_ms:.1f}x vs eager is above the "
                         f"{self.settings.suspicious_speedup:g}x review threshold: check the kernel by hand")
        if device.type == "cuda" and cand:
            # Bytes it must move: its outputs, and its inputs unless the reference's outputs did not change with
            # them over the trials (then reading them is not needed: a constant result may be written directly).
            in_bytes = 0 if self.reference_output_constant else sum(
                t.numel() * t.element_size() for _, t in AC.tensors(inputs))
            io_bytes = in_bytes + self.output_bytes
            with self.timed("roofline_bandwidth_probe"):
                floor = AC.roofline_ms(io_bytes, RC.copy_bandwidth(self.cache_dir, lambda: AC.measure_copy_bandwidth(device)))
            below = (f"candidate time {cand.median_ms * 1e3:.1f} us is below the memory roofline ({floor * 1e3:.1f} us "
                     f"to move {io_bytes / 1e6:.1f} MB at the measured bandwidth)")
            # q3: a tampered timer moves every rep; the measured bandwidth itself is within a few per cent
            if (cand.q3_ms or cand.median_ms) < ROOFLINE_REJECT * floor:
                from kforge_core.evaluation.outcome import Outcome
                from kforge_core.evaluation.result import Verdict

                raise Outcome(Verdict.REJECTED, f"physically impossible timing: {below}; the timed figure misses work")
            if cand.median_ms < ROOFLINE_FLAG * floor:
                flags.append(below)
        return flags
