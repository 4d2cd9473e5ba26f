"""Anti-cheat checks of one correctness trial, each returning a violation (or None) for the trial loop to act
on. Values are compared by fingerprint (fingerprint.py), so the checks add no copy of the inputs or outputs."""

from __future__ import annotations

from dataclasses import dataclass

from kforge_core.evaluation.judging import anticheat as AC
from kforge_core.evaluation.judging.fingerprint import fingerprints


@dataclass
class Violation:
    rule: str  # short name, as in docs/anticheat.md
    evidence: str

    def message(self) -> str:
        return f"rule violated ({self.rule}): {self.evidence}"


def input_prints(inputs) -> list[tuple]:
    return fingerprints([t for _, t in AC.tensors(inputs)])


def mutated_paths(inputs, before: list[tuple]) -> list[str]:
    return [p for (p, _), a, b in zip(AC.tensors(inputs), input_prints(inputs), before) if a != b]


def mutation(cand_changed: list[str], ref_changed: list[str]) -> Violation | None:
    if cand_changed and not ref_changed:
        return Violation("input-mutation", f"the candidate modified its inputs in place ({', '.join(cand_changed)}); "
                                           "the reference does not")
    return None


def aliasing(cand_out, inputs, ref_out, ref_inputs) -> Violation | None:
    cand_alias = AC.aliased(cand_out, inputs)
    if cand_alias and not AC.aliased(ref_out, ref_inputs):
        return Violation("output-aliases-input", f"output memory is input memory ({', '.join(cand_alias)})")
    return None


def fallback(ref_ops: set[str], cand_ops: set[str]) -> Violation | None:
    found = AC.fallback_violation(ref_ops, cand_ops)
    return Violation("pytorch-fallback", found) if found else None
