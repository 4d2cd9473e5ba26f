"""Every template renders with every backend, with and without each optional part."""

import pytest

from kforge_core.agents.analysis import AnalysisAgent, AnalysisRequest
from kforge_core.agents.generation import GenerationAgent, GenerationRequest, ReferenceKernel
from kforge_core.agents.parsing import Recommendation
from kforge_core.agents.prompts import BUILTIN_DIR, PromptLibrary
from kforge_core.backends import all_backends
from kforge_core.evaluation.result import EvalResult, TimingStats, TrialResult, Verdict
from kforge_core.llm.base import ImageData
from kforge_core.llm.offline import ScriptedProvider
from kforge_core.problems import resolve_problem
from kforge_core.profile import Metric, ProfileReport

PROBLEM = resolve_problem("level1/3_Softmax")
T = TimingStats(1.0, 0.9, 1.1, 0.8, 1.5, 1.0, 0.1, 20)
RESULTS = {
    "compile": EvalResult(Verdict.COMPILE_ERROR, ["candidate.py:12 (main.cpp:5): error: 'foo' was not declared"],
                          build_log="main.cpp:5:3: error: 'foo' was not declared in this scope"),
    "mismatch": EvalResult(Verdict.NUMERICAL_MISMATCH, ["trial 1 (seed 42): 10/100 elements outside atol"],
                           trials=[TrialResult(42, False, 0.5, 0.2, 0.1, "output[0, 3]: expected 1, got 1.5")]),
    "runtime": EvalResult(Verdict.RUNTIME_ERROR, ["the program crashed (SIGSEGV)"], stderr_tail="free(): invalid"),
    "correct": EvalResult(Verdict.CORRECT, ["all 3 trials match"], trials=[TrialResult(42, True, 0.0, 0.0, 0.0)],
                          timings={"candidate": T, "eager": TimingStats(2.0, 1.9, 2.1, 1.8, 2.5, 2.0, 0.1, 20)}),
}


@pytest.mark.parametrize("backend", all_backends(), ids=lambda b: b.name)
@pytest.mark.parametrize("state", [None, *RESULTS])
def test_generation_prompt_renders_for_every_backend_and_state(backend, state):
    agent = GenerationAgent(ScriptedProvider([]))
    req = GenerationRequest(PROBLEM, backend, round_index=2 if state else 1,
                            previous_code="class ModelNew: pass" if state else None,
                            previous_result=RESULTS[state] if state else None,
                            recommendation=Recommendation("Fuse passes", "one loop", "2 passes over memory",
                                                          expected_effect="1.5x") if state == "correct" else None,
                            reference_kernel=ReferenceKernel("cuda", "__global__ void k() {}"))
    system, user = agent.build_messages(req)
    assert backend.name in system.text and "ModelNew" in system.text
    assert PROBLEM.source.strip() in user.text and "{{" not in user.text and "{%" not in user.text
    assert "__global__ void k() {}" in user.text and "threadgroup" in user.text  # reference + concept map
    if state == "compile":
        assert "'foo' was not declared in this scope" in user.text and "compile_error" in user.text
    if state == "mismatch":
        assert "max abs err 0.5" in user.text and "expected 1, got 1.5" in user.text
    if state == "runtime":
        assert "free(): invalid" in user.text
    if state == "correct":
        assert "Fuse passes" in user.text and "Speedup vs PyTorch eager: 2.00x" in user.text
    if state is None:
        assert "Your previous program" not in user.text


@pytest.mark.parametrize("backend", all_backends(), ids=lambda b: b.name)
@pytest.mark.parametrize("multimodal", [True, False])
def test_analysis_prompt_renders_and_handles_images(backend, multimodal):
    provider = ScriptedProvider([])
    provider.supports_images = multimodal
    report = ProfileReport("ncu", metrics=[Metric("sm__throughput", 42.0, "%")], findings=["uncoalesced access"],
                           images=[ImageData(b"\x89PNG...", "image/png", "Nsight Compute details")])
    req = AnalysisRequest(PROBLEM, backend, "class ModelNew: pass", RESULTS["correct"], report,
                          history=[{"round": 1, "verdict": "correct", "speedup": 1.2, "recommendation": "tile"}])
    messages, sent, omitted = AnalysisAgent(provider).build_messages(req)
    user = messages[1]
    assert "sm__throughput: 42 %" in user.text and "uncoalesced access" in user.text
    assert "round 1: correct, 1.20x vs eager; recommendation applied: tile" in user.text
    if multimodal:
        assert sent == 1 and omitted == 0 and len(user.images) == 1 and "attached" in user.text
    else:
        assert sent == 0 and omitted == 1 and user.images == [] and "omitted because this model takes text" in user.text


def test_every_template_file_is_used_or_included():
    names = PromptLibrary.template_names()
    for b in all_backends():
        assert f"backends/{b.name}.j2" in names
    for n in ("generation_system.j2", "generation.j2", "analysis_system.j2", "analysis.j2", "transfer.j2"):
        assert n in names and (BUILTIN_DIR / n).read_text().strip()


def test_user_override_folder(tmp_path):
    (tmp_path / "generation_system.j2").write_text("CUSTOM SYSTEM PROMPT for {{ backend.name }}")
    agent = GenerationAgent(ScriptedProvider([]), PromptLibrary(tmp_path))
    system, user = agent.build_messages(GenerationRequest(PROBLEM, all_backends()[0]))
    assert system.text.strip() == f"CUSTOM SYSTEM PROMPT for {all_backends()[0].name}"
    assert "The problem to optimise" in user.text  # other templates still the built-in ones


def test_one_shot_example_never_gives_the_answer_away():
    relu = resolve_problem("level1/1_ReLU")
    for b in all_backends():
        _, user = GenerationAgent(ScriptedProvider([])).build_messages(GenerationRequest(relu, b))
        example = b.example_for(relu.name)
        if example:
            assert example.read_text().strip() not in user.text
