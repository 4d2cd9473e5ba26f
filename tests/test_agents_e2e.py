"""Scripted end to end: generation -> evaluation (CPU backend, real compile) -> analysis -> generation,
two rounds, checking what each prompt contained."""

import json

from candidates.cpu_test_kernels import candidate
from kforge_core.agents.analysis import AnalysisAgent, AnalysisRequest
from kforge_core.agents.generation import GenerationAgent, GenerationRequest
from kforge_core.backends import get_backend
from kforge_core.evaluation import EvalSettings, Verdict, evaluate
from kforge_core.llm.offline import ScriptedProvider
from kforge_core.problems import resolve_problem
from kforge_core.profile import report_from_eval

SETTINGS = EvalSettings(compile_reference=False, min_timing_s=0.05, min_reps=5, max_reps=30)
REC = {"title": "Vectorise the ReLU loop", "rationale": "candidate time (median) is above eager",
       "metrics": ["candidate time (median)", "speedup vs eager"], "change": "add `#pragma omp simd` to the loop",
       "expected_effect": "about 1.3x"}


def test_two_scripted_rounds_with_cpu_evaluation():
    problem, cpu = resolve_problem("level1/1_ReLU"), get_backend("cpu")
    round1 = candidate("return ext.relu_ok(x)")
    round2 = candidate("return ext.relu_off_by_a_bit(x)")  # the "optimisation" breaks numerics
    gen_llm = ScriptedProvider([f"Here is a first version.\n```python\n{round1}```",
                                f"Applied the recommendation:\n```python\n{round2}```"])
    ana_llm = ScriptedProvider([f"```json\n{json.dumps(REC)}\n```"])
    gen, ana = GenerationAgent(gen_llm), AnalysisAgent(ana_llm)

    # round 1: generate, evaluate, profile, analyse
    out1 = gen.generate(GenerationRequest(problem, cpu, round_index=1))
    assert out1.program == round1 and out1.failure == ""
    prompt1 = out1.messages[1].text
    assert problem.source.strip() in prompt1 and "Example problem" in prompt1
    assert "Your previous program" not in prompt1 and "Recommendation" not in prompt1
    r1 = evaluate(problem, out1.program, cpu, SETTINGS)
    assert r1.verdict == Verdict.CORRECT, r1.messages
    report = report_from_eval(r1)
    a1 = ana.analyze(AnalysisRequest(problem, cpu, out1.program, r1, report, round_index=1))
    assert a1.error == "" and a1.recommendation.title == REC["title"]
    ana_prompt = a1.messages[1].text
    assert "candidate time (median)" in ana_prompt and "speedup vs eager" in ana_prompt
    assert out1.program.strip() in ana_prompt

    # round 2: the prompt carries round 1's code, verdict, timings and the recommendation
    out2 = gen.generate(GenerationRequest(problem, cpu, round_index=2, previous_code=out1.program,
                                          previous_result=r1, recommendation=a1.recommendation))
    prompt2 = gen_llm.calls[1][1].text
    assert out1.program.strip() in prompt2 and "verdict **correct**" in prompt2
    assert f"Speedup vs PyTorch eager: {r1.speedup('eager'):.2f}x" in prompt2
    assert REC["title"] in prompt2 and REC["change"] in prompt2 and REC["expected_effect"] in prompt2
    assert "Make the program faster" in prompt2
    r2 = evaluate(problem, out2.program, cpu, SETTINGS)
    assert r2.verdict == Verdict.NUMERICAL_MISMATCH

    # the next prompt would carry the mismatch details back
    prompt3 = gen.build_messages(GenerationRequest(problem, cpu, round_index=3, previous_code=out2.program,
                                                   previous_result=r2))[1].text
    assert "verdict **numerical_mismatch**" in prompt3 and "max abs err 0.01" in prompt3
    assert "Fix the program" in prompt3
    assert len(gen_llm.calls) == 2 and len(ana_llm.calls) == 1


def test_generation_failure_and_api_error_are_outcomes_not_exceptions():
    problem, cpu = resolve_problem("level1/1_ReLU"), get_backend("cpu")
    out = GenerationAgent(ScriptedProvider(["I cannot do that."])).generate(GenerationRequest(problem, cpu))
    assert out.program is None and "no program" in out.failure and out.answer == "I cannot do that."
    out = GenerationAgent(ScriptedProvider([])).generate(GenerationRequest(problem, cpu))
    assert out.program is None and "the model call failed" in out.failure
