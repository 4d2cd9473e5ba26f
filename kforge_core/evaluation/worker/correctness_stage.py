"""The correctness stage: several seeded trials, the candidate run first on each trial's inputs, anti-cheat
checks (trial_checks.py) before values are compared in chunks (correctness.py). No full copy of the inputs
or outputs is kept: the harness's memory stays close to the reference's own."""

from __future__ import annotations

from kforge_core.evaluation.worker.loading import clone, seeded, to_device
from kforge_core.evaluation.outcome import Outcome
from kforge_core.evaluation.result import Verdict


# The float64 run doubles the reference's inputs and outputs for a moment; above this (KernelBench's largest
# elementwise problems move 6 GB, where an exact reference adds little) the fixed tolerance decides.
FLOAT64_BUDGET_BYTES = 8 << 30


class CorrectnessStage:
    def correctness(self, ref, model_new, device, sync) -> list[dict]:
        from kforge_core.evaluation.judging import anticheat as AC
        from kforge_core.evaluation.judging import trial_checks as TC
        from kforge_core.evaluation.judging.correctness import compare, validate_output
        from kforge_core.evaluation.judging.fingerprint import fingerprints

        self.log.stage("correctness")
        s = self.settings
        checks, strict = s.strictness != "off", s.strictness == "strict"
        failures, first_prints = [], None
        for i in range(s.n_trials):
            seed = s.seed + i  # fresh inputs and a fresh model pair per trial
            self.log.write({"trial": i + 1, "of": s.n_trials})
            init, inputs = self.make_case(ref, seed)
            with self.candidate_code("ModelNew(*init_inputs)"):
                cand_model = seeded(seed, lambda: model_new(*init)).to(device)
            inputs = to_device(inputs, device)
            pristine = TC.input_prints(inputs) if checks else []
            if checks and self.output_bytes:
                with self.timed("poison_free_memory"):
                    AC.poison_free_memory(device, self._poison_bytes(device))
            # The candidate runs first: nothing of this trial's reference run exists yet.
            with self.candidate_code(f"trial {i + 1} (seed {seed}): ModelNew.forward"):
                if checks and i == 0 and strict:
                    with self.timed("fallback_check_dispatch"):
                        cand_ops = AC.aten_ops(lambda: cand_model(*clone(inputs)))
                cand_out = cand_model(*inputs)
                sync()
            bad = validate_output(cand_out, device)
            if bad:
                raise Outcome(Verdict.REJECTED, f"trial {i + 1} (seed {seed}): {bad}")
            cand_changed = TC.mutated_paths(inputs, pristine) if checks else []
            ref_inputs = inputs
            if cand_changed:  # the reference gets the inputs as they were: made again from the seed
                ref_inputs = to_device(self.make_case(ref, seed)[1], device)
            ref_model = self.make_reference(ref, init, seed, device)
            if checks and i == 0 and strict:
                with self.timed("fallback_check_dispatch"):
                    ref_ops = AC.aten_ops(lambda: self.run_reference(ref_model, clone(ref_inputs)))
                violation = TC.fallback(ref_ops, cand_ops)
                if violation:
                    raise Outcome(Verdict.REJECTED, violation.message())
            ref_out = self.run_reference(ref_model, ref_inputs)
            sync()
            self.output_bytes = AC.output_bytes_hint(ref_out)
            if checks:
                ref_changed = TC.mutated_paths(ref_inputs, pristine) if cand_changed else []
                violation = TC.mutation(cand_changed, ref_changed) or TC.aliasing(cand_out, inputs, ref_out, ref_inputs)
                if violation:
                    raise Outcome(Verdict.REJECTED, violation.message())
            c = self.compare_outputs(ref_model, ref_inputs, ref_out, cand_out)
            if not c.structure_ok:
                self.trials.append({"seed": seed, "passed": False, "note": c.message})
                raise Outcome(Verdict.SHAPE_MISMATCH, f"trial {i + 1} (seed {seed}): {c.message}")
            note = c.message
            outs = ([t for _, t in AC.tensors(cand_out)], [t for _, t in AC.tensors(ref_out)])
            prints = (fingerprints(outs[0]), fingerprints(outs[1]))
            if first_prints is None:
                first_prints = prints
            elif not c.passed and prints[0] == first_prints[0] and prints[1] != first_prints[1]:
                note += "; the output did not change with the input (constant or cached result)"
            self.reference_output_constant = i > 0 and prints[1] == first_prints[1]
            self.trials.append({"seed": seed, "passed": c.passed, "max_abs_err": c.max_abs_err,
                                "max_rel_err": c.max_rel_err, "mismatch_fraction": c.mismatch_fraction,
                                "worst": c.worst, "note": note, "error_model": c.error_model})
            if not c.passed:
                failures.append(f"trial {i + 1} (seed {seed}): {note}; worst {c.worst}")
            cand_out = ref_out = outs = inputs = ref_inputs = cand_model = ref_model = None  # freed before the next trial
        if failures:
            raise Outcome(Verdict.NUMERICAL_MISMATCH, *failures)
        return self.trials

    def compare_outputs(self, ref_model, ref_inputs, ref_out, cand_out):
        """The candidate's outputs judged by the error model (settings.error_model): against the reference run
        again in float64 where it can be, else by the fixed tolerances (said in the comparison)."""
        from kforge_core.evaluation.judging.correctness import compare

        ref64, why = self.reference_float64(ref_model, ref_inputs)
        try:
            return compare(ref_out, cand_out, self.settings.tolerances, ref64, why)
        finally:
            del ref64

    def reference_float64(self, ref_model, inputs):
        """(the reference's outputs computed in float64 from the same weights and inputs, None) or (None, why not)."""
        import copy

        import torch

        from kforge_core.evaluation.judging import error_model as EM
        from kforge_core.evaluation.judging.anticheat import tensors

        if self.settings.error_model != "float64":
            return None, "settings.error_model is fixed"
        need = EM.float64_bytes(inputs, self.output_bytes) + 2 * sum(
            p.numel() * p.element_size() for p in ref_model.parameters())
        device = next((t.device for _, t in tensors(inputs)), torch.device("cpu"))
        if need > FLOAT64_BUDGET_BYTES:
            return None, (f"a float64 run would need ~{need / 2**30:.1f} GiB more memory (the budget is "
                          f"{FLOAT64_BUDGET_BYTES / 2**30:.0f} GiB)")
        if device.type == "cuda":
            free = torch.cuda.mem_get_info()[0]
            if 2 * need > free:
                return None, f"not enough free GPU memory for a float64 run (~{need / 2**30:.1f} GiB)"
        elif need > self.settings.memory_limit_mb * 2**20 // 4:
            return None, f"a float64 run needs ~{need / 2**30:.1f} GiB, over a quarter of the memory limit"
        try:
            model64 = copy.deepcopy(ref_model).to(torch.float64)
            with torch.no_grad():
                out = model64(*EM.widened(inputs))
            del model64
        except Exception as e:  # an operator without a float64 kernel, a dtype fixed inside forward ...
            return None, f"the reference does not run in float64 ({type(e).__name__}: {str(e)[:120]})"
        return out, ""

    def _poison_bytes(self, device) -> int:
        """Twice the output, within half the free device memory. On the CPU only small outputs: large
        allocations come from fresh (zeroed) pages there, which no earlier result can be in."""
        import torch

        if device.type == "cuda":
            return min(2 * self.output_bytes, torch.cuda.mem_get_info()[0] // 2)
        return min(2 * self.output_bytes, 64 << 20)
