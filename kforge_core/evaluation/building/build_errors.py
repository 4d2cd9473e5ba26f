"""Turn a compiler's output into the one error a human (or model) should read first, located in the
candidate's own source where possible."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# gcc/clang: "file:line:col: error: msg"; nvcc/cicc: "file(line): error: msg"; linker: "undefined reference"
_GCC = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?:fatal\s+)?error:\s*(?P<msg>.*)$")
_NVCC = re.compile(r"^(?P<file>[^\s(][^(]*)\((?P<line>\d+)\):\s*(?:catastrophic\s+)?error:?\s*(?P<msg>.*)$")
_LINK = re.compile(r"(undefined reference to .*|undefined symbol: .*|ld returned \d+ exit status)")

MAX_LOG_CHARS = 6000


@dataclass
class CompilerError:
    message: str  # headline: "candidate.py:12 (main.cpp:9): error: ..."
    file: str = ""
    line: int | None = None
    candidate_line: int | None = None


def _candidate_line(file: str, line: int, candidate_source: str) -> int | None:
    """Find the erroneous generated-source line in the candidate (sources are embedded as strings)."""
    try:
        text = Path(file).read_text(errors="replace").splitlines()[line - 1].strip()
    except (OSError, IndexError):
        return None
    if len(text) < 3:
        return None
    hits = [i + 1 for i, cand in enumerate(candidate_source.splitlines()) if cand.strip() == text]
    return hits[0] if len(hits) == 1 else None


def first_compiler_error(log: str, candidate_source: str = "") -> CompilerError | None:
    for raw in log.splitlines():
        line = raw.strip()
        m = _GCC.match(line) or _NVCC.match(line)
        if m:
            file, lineno, msg = m.group("file"), int(m.group("line")), m.group("msg").strip()
            cand = _candidate_line(file, lineno, candidate_source) if candidate_source else None
            where = f"{Path(file).name}:{lineno}"
            head = f"candidate.py:{cand} ({where})" if cand else where
            return CompilerError(f"{head}: error: {msg}", file=file, line=lineno, candidate_line=cand)
    for raw in log.splitlines():
        m = _LINK.search(raw)
        if m:
            return CompilerError(f"link error: {m.group(1).strip()}")
    return None


def trim_log(log: str, limit: int = MAX_LOG_CHARS) -> str:
    """Keep the error lines and their neighbours; drop the long command lines ninja echoes."""
    lines = [l for l in log.splitlines() if not l.lstrip().startswith(("[1/", "[2/", "[3/", "FAILED:"))
             and len(l) < 2000]
    keep: list[str] = []
    for i, l in enumerate(lines):
        if "error" in l.lower() or "warning: " in l.lower():
            keep.extend(lines[max(0, i - 1): i + 3])
    text = "\n".join(dict.fromkeys(keep)) or "\n".join(lines)
    return text if len(text) <= limit else text[:limit] + f"\n... [{len(text) - limit} more characters]"
