"""Getting a program (or a recommendation) out of a model's free-form answer, robustly."""

from __future__ import annotations

import ast
import html
import json
import re
import textwrap
from dataclasses import dataclass, field

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_FENCE_OPEN = re.compile(r"^([ \t]*)(`{3,}|~{3,})[ \t]*([\w+#.\-]*)[^\n]*$", re.M)
_CODE_START = re.compile(r"^(import |from \S+ import |class |def |#|@|[A-Za-z_]\w* *=)")
PYTHON_TAGS = {"", "python", "py", "python3", "py3", "pycon"}


@dataclass
class ExtractedProgram:
    code: str | None
    failure: str = ""  # why no program could be taken (generation_failure)
    notes: list[str] = field(default_factory=list)


@dataclass
class _Block:
    lang: str
    body: str
    closed: bool


def _blocks(text: str) -> list[_Block]:
    blocks, pos = [], 0
    while True:
        m = _FENCE_OPEN.search(text, pos)
        if not m:
            return blocks
        indent, fence, lang = m.group(1), m.group(2), m.group(3).lower()
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.M)
        c = close.search(text, m.end())
        body = text[m.end() + 1: c.start()] if c else text[m.end() + 1:]
        if indent:
            body = textwrap.dedent(body)
        blocks.append(_Block(lang, body, c is not None))
        if not c:
            return blocks
        pos = c.end()


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
        return True
    except (SyntaxError, ValueError):
        return False


def _defines_model_new(code: str) -> bool:
    return re.search(r"^\s*class\s+ModelNew\b", code, re.M) is not None


def _repair(code: str, notes: list[str]) -> str:
    """Fix the damage chat front-ends do: HTML escaping, a stray language tag on the first line."""
    if not _parses(code) and re.search(r"&(lt|gt|amp|quot|#39);", code):
        un = html.unescape(code)
        if _parses(un):
            notes.append("the code was HTML-escaped; unescaped it")
            return un
    first, _, rest = code.partition("\n")
    if first.strip().lower() in {"python", "py", "python3"} and _parses(rest):
        notes.append("dropped a stray language tag on the first line")
        return rest
    return code


def _unfenced(text: str, notes: list[str]) -> str | None:
    """Code with no fences: from the first code-looking line, dropping trailing prose until it parses."""
    lines = text.split("\n")
    start = next((i for i, l in enumerate(lines) if _CODE_START.match(l)), None)
    if start is None:
        return None
    body = lines[start:]
    for end in range(len(body), 0, -1):
        code = "\n".join(body[:end]).strip("\n")
        if _defines_model_new(code) and _parses(code):
            if end < len(body):
                notes.append("the code had no fences; dropped the prose after it")
            else:
                notes.append("the code had no fences")
            return code + "\n"
    return None


def _from_json(text: str, notes: list[str]) -> str | None:
    try:
        obj = json.loads(text.strip())
    except (json.JSONDecodeError, ValueError):
        return None
    if isinstance(obj, dict):
        for v in obj.values():
            if isinstance(v, str) and _defines_model_new(v):
                notes.append("the program came wrapped in JSON")
                return v
    return None


def extract_program(answer: str | None) -> ExtractedProgram:
    if answer is None or not answer.strip():
        return ExtractedProgram(None, "the answer is empty")
    if "\x00" in answer:
        return ExtractedProgram(None, "the answer contains binary data, not text")
    notes: list[str] = []
    text = answer.replace("\r\n", "\n").replace("\r", "\n")
    without_thinking = _THINK.sub("", text)
    if without_thinking != text:
        notes.append("ignored the model's thinking section")
        text = without_thinking

    blocks = _blocks(text)
    with_model = [b for b in blocks if _defines_model_new(b.body)]
    if with_model:
        pythonish = [b for b in with_model if b.lang in PYTHON_TAGS] or with_model
        if len(pythonish) > 1:
            notes.append(f"{len(pythonish)} code blocks define ModelNew; took the last")
        block = pythonish[-1]
        if block.lang not in PYTHON_TAGS:
            notes.append(f"the block was labelled {block.lang!r} but holds the Python program")
        code = _repair(block.body, notes)
        if not block.closed:
            if not _parses(code):
                return ExtractedProgram(None, "the answer was cut off inside the code block (unclosed fence and "
                                              "incomplete code): raise the model's max tokens", notes)
            notes.append("the code block was not closed")
        return ExtractedProgram(code.rstrip() + "\n", notes=notes)

    code = _from_json(text, notes) or _unfenced(_repair(text, notes), notes)
    if code:
        return ExtractedProgram(code, notes=notes)
    if blocks:
        langs = ", ".join(sorted({b.lang or "unlabelled" for b in blocks}))
        return ExtractedProgram(None, f"the answer has {len(blocks)} code block(s) ({langs}) but none defines "
                                      "class ModelNew", notes)
    if "ModelNew" in text:
        return ExtractedProgram(None, "the answer mentions class ModelNew but holds no complete program", notes)
    return ExtractedProgram(None, "the answer contains no program (no code block, no class ModelNew)", notes)


# -- recommendations ------------------------------------------------------------------------------------

@dataclass
class Recommendation:
    title: str
    change: str
    rationale: str = ""
    metrics: list[str] = field(default_factory=list)
    expected_effect: str = ""
    edited_by_user: bool = False
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"title": self.title, "change": self.change, "rationale": self.rationale, "metrics": self.metrics,
                "expected_effect": self.expected_effect, "edited_by_user": self.edited_by_user}

    @classmethod
    def from_dict(cls, d: dict) -> "Recommendation":
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


class RecommendationError(ValueError):
    pass


_KEYS = {"title": ("title", "name", "summary", "recommendation"),
         "change": ("change", "concrete_change", "action", "code_change", "how", "suggestion"),
         "rationale": ("rationale", "reason", "why", "analysis", "evidence"),
         "metrics": ("metrics", "metrics_used", "evidence_metrics"),
         "expected_effect": ("expected_effect", "expected", "effect", "impact", "expected_impact")}


def _json_objects(text: str):
    if text.strip().startswith(("{", "[")):
        yield text.strip()
    for b in _blocks(text):
        if b.lang in ("json", "") and b.body.strip().startswith(("{", "[")):
            yield b.body
    depth, start = 0, None
    for i, ch in enumerate(text):
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                yield text[start: i + 1]


def _from_mapping(d: dict, notes: list[str]) -> Recommendation | None:
    low = {str(k).lower().replace(" ", "_"): v for k, v in d.items()}
    got = {}
    for field_name, names in _KEYS.items():
        for n in names:
            if n in low and low[n] not in (None, "", []):
                got[field_name] = low[n]
                break
    if "title" not in got and "change" not in got:
        return None
    metrics = got.get("metrics", [])
    if isinstance(metrics, str):
        metrics = [m.strip() for m in metrics.split(",") if m.strip()]
    elif isinstance(metrics, dict):
        metrics = [f"{k}={v}" for k, v in metrics.items()]
    as_text = lambda v: v if isinstance(v, str) else json.dumps(v)  # noqa: E731
    title = as_text(got.get("title") or got["change"])[:200]
    change = as_text(got.get("change") or got["title"])
    return Recommendation(title=title, change=change, rationale=as_text(got.get("rationale", "")),
                          metrics=[str(m) for m in metrics], expected_effect=as_text(got.get("expected_effect", "")),
                          notes=notes)


def parse_recommendation(answer: str | None) -> Recommendation:
    if answer is None or not answer.strip():
        raise RecommendationError("the analysis answer is empty")
    notes: list[str] = []
    text = _THINK.sub("", answer.replace("\r\n", "\n"))
    for candidate in _json_objects(text):
        try:
            obj = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, list):
            dicts = [o for o in obj if isinstance(o, dict)]
            if not dicts:
                continue
            if len(dicts) > 1:
                notes.append(f"the answer held {len(dicts)} recommendations; kept the first")
            obj = dicts[0]
        if isinstance(obj, dict):
            if isinstance(obj.get("recommendation"), dict):
                obj = obj["recommendation"]
            rec = _from_mapping(obj, notes)
            if rec:
                return rec
    # Markdown fallback: "Title: ...", "**Change**: ..." lines.
    fields = {}
    for m in re.finditer(r"^[#*\s-]*(title|change|rationale|why|expected effect|metrics)\**\s*[:：]\**\s*(.+)$",
                         text, re.I | re.M):
        fields.setdefault(m.group(1).lower().replace(" ", "_"), m.group(2).strip())
    if fields.get("title") or fields.get("change"):
        notes.append("the answer was not JSON; read its labelled lines")
        rec = _from_mapping(fields, notes)
        if rec:
            return rec
    raise RecommendationError("no recommendation found: expected a JSON object with title/change "
                              f"(answer began: {answer.strip()[:120]!r})")
