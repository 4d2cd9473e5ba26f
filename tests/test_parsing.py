"""Extracting programs and recommendations from realistic malformed model answers."""

import pytest

from kforge_core.agents.parsing import RecommendationError, extract_program, parse_recommendation

PROG = """import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        return x
"""
DRAFT = PROG.replace("return x", "return x  # draft")
CPP = "torch::Tensor f(torch::Tensor x) { return x; }"

OK_CASES = {
    "fenced with prose around": (f"Here is my kernel.\n\n```python\n{PROG}```\n\nIt fuses everything.", PROG, []),
    "draft then final block": (f"First try:\n```python\n{DRAFT}```\nBetter:\n```python\n{PROG}```", PROG,
                               ["2 code blocks define ModelNew"]),
    "cpp block then python block": (f"```cpp\n{CPP}\n```\nand the wrapper:\n```python\n{PROG}```", PROG, []),
    "no fences, pure code": (PROG, PROG, ["no fences"]),
    "no fences, trailing prose": (PROG + "\nThis implementation uses OpenMP to parallelise the loop.\n", PROG,
                                  ["dropped the prose"]),
    "leading prose, no fences": ("Sure! Below is the optimized version.\n\n" + PROG, PROG, ["no fences"]),
    "unclosed fence, complete code": (f"```python\n{PROG}", PROG, ["not closed"]),
    "thinking section with a draft": (f"<think>maybe\n```python\n{DRAFT}```\n</think>\n```python\n{PROG}```",
                                      PROG, ["thinking"]),
    "tilde fences": (f"~~~python\n{PROG}~~~\n", PROG, []),
    "four backticks": (f"````python\n{PROG}````\n", PROG, []),
    "language tag variants": (f"```Python3\n{PROG}```", PROG, []),
    "CRLF line endings": (f"```python\n{PROG}```".replace("\n", "\r\n"), PROG, []),
    "HTML-escaped code": ("```python\n" + PROG.replace("return x", "return x if x.numel() &gt; 0 else -x") + "```",
                          PROG.replace("return x", "return x if x.numel() > 0 else -x"), ["HTML-escaped"]),
    "indented block inside a list": ("1. The code:\n\n   ```python\n" + "".join("   " + l + "\n" if l else "\n"
                                                                             for l in PROG.splitlines()) + "   ```\n",
                                     PROG, []),
    "mislabelled block": (f"```cpp\n{PROG}```", PROG, ["labelled 'cpp'"]),
    "json wrapped": ('{"code": ' + __import__("json").dumps(PROG) + "}", PROG, ["JSON"]),
    "stray language tag unfenced": ("python\n" + PROG, PROG, []),
}

FAIL_CASES = {
    "empty": ("", "empty"),
    "whitespace": ("  \n\t ", "empty"),
    "prose only": ("I would use shared memory tiling and vectorised loads here.", "no program"),
    "refusal": ("I'm sorry, but I can't help with that request.", "no program"),
    "only the reference Model": ("```python\nclass Model(nn.Module):\n    pass\n```", "none defines class ModelNew"),
    "only C++": (f"```cpp\n{CPP}\n```", "none defines class ModelNew"),
    "truncated inside block": ("```python\nimport torch\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
                               "        return torch.ops.my_ext.run(x,", "cut off"),
    "mentions ModelNew without code": ("You should write class ModelNew that calls the kernel.",
                                       "holds no complete program"),
    "binary junk": ("\x00\x01\x02garbage", "binary"),
}


@pytest.mark.parametrize("case", list(OK_CASES))
def test_program_extracted(case):
    answer, expected, note_parts = OK_CASES[case]
    got = extract_program(answer)
    assert got.failure == "" and got.code is not None, got.failure
    if expected is not None:
        assert got.code == expected
    compile(got.code, "candidate.py", "exec")
    for part in note_parts:
        assert any(part in n for n in got.notes), got.notes


@pytest.mark.parametrize("case", list(FAIL_CASES))
def test_generation_failure_with_reason(case):
    answer, reason = FAIL_CASES[case]
    got = extract_program(answer)
    assert got.code is None and reason in got.failure


def test_counts():
    assert len(OK_CASES) + len(FAIL_CASES) >= 15


REC_JSON = ('{"title": "Vectorise the inner loop", "rationale": "candidate time 0.9 ms vs eager 0.5 ms", '
            '"metrics": ["candidate time (median)"], "change": "add #pragma omp simd", "expected_effect": "2x"}')


@pytest.mark.parametrize("answer", [
    f"```json\n{REC_JSON}\n```",
    f"Analysis first.\n\n{REC_JSON}\n\nThat is all.",
    f"<think>the loop is scalar</think>```json\n{REC_JSON}\n```",
    '{"recommendation": ' + REC_JSON + "}",
    "[" + REC_JSON + ', {"title": "second", "change": "other"}]',
    REC_JSON.replace('"change"', '"Change"').replace('"title"', '"Title"'),
])
def test_recommendation_json_variants(answer):
    rec = parse_recommendation(answer)
    assert rec.title == "Vectorise the inner loop" and rec.change == "add #pragma omp simd"
    assert rec.metrics == ["candidate time (median)"] and rec.expected_effect == "2x"


def test_recommendation_markdown_fallback_and_list_note():
    rec = parse_recommendation("**Title**: Tile the matmul\n**Change**: 64x64 blocks\n**Why**: cache misses")
    assert rec.title == "Tile the matmul" and rec.change == "64x64 blocks" and rec.rationale == "cache misses"
    rec = parse_recommendation("[" + REC_JSON + ', {"title": "second", "change": "other"}]')
    assert any("kept the first" in n for n in rec.notes)


@pytest.mark.parametrize("answer", ["", "Looks fine to me.", "```json\n{not json}\n```", '{"foo": 1}'])
def test_recommendation_garbage_is_an_error(answer):
    with pytest.raises(RecommendationError):
        parse_recommendation(answer)
