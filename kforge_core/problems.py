"""Problems in KernelBench format: a module defining `Model`, `get_inputs()` and `get_init_inputs()`.

Loading is static (parse + name checks), so every KernelBench level file loads unchanged even when its
imports (e.g. `transformers` in level 4) are not installed here. Running a problem's code only ever happens
inside the isolated evaluator worker, which reports a broken problem as a ProblemError naming the file.
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from kforge_core import ASSETS_DIR

REQUIRED_NAMES = ("Model", "get_inputs", "get_init_inputs")
BUILTIN_DIR = ASSETS_DIR / "problems"


class ProblemError(Exception):
    """A problem file that cannot be used; the message names the file and the cause."""


@dataclass(frozen=True)
class Problem:
    name: str  # e.g. "level1/1_ReLU"
    source: str
    path: str  # where it came from (a file path, or "<pasted>")
    level: int | None = None
    description: str = field(default="", compare=False)

    @property
    def source_hash(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()[:16]

    def to_dict(self) -> dict:
        return {"name": self.name, "path": self.path, "level": self.level, "source": self.source}

    @classmethod
    def from_dict(cls, d: dict) -> "Problem":
        return problem_from_source(d["source"], name=d["name"], path=d.get("path", "<stored>"), level=d.get("level"))


def _bound_top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _docstring(tree: ast.Module) -> str:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            return (ast.get_docstring(node) or "").strip()
    return (ast.get_docstring(tree) or "").strip()


def _level_from_path(path: str) -> int | None:
    m = re.search(r"level[_\-]?(\d+)", path, re.IGNORECASE)
    return int(m.group(1)) if m else None


def problem_from_source(source: str, name: str, path: str = "<pasted>", level: int | None = None) -> Problem:
    """Parse and check a problem's source; raise ProblemError naming `path` and the cause."""
    if not source.strip():
        raise ProblemError(f"{path}: the file is empty")
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as e:
        raise ProblemError(f"{path}:{e.lineno}: syntax error: {e.msg}") from None
    except ValueError as e:  # e.g. null bytes
        raise ProblemError(f"{path}: not valid Python source ({e})") from None
    missing = [n for n in REQUIRED_NAMES if n not in _bound_top_level_names(tree)]
    if missing:
        raise ProblemError(f"{path}: not a KernelBench-format problem, missing top-level {', '.join(missing)}")
    return Problem(name=name, source=source, path=path, level=level, description=_docstring(tree))


def load_problem_file(path: str | Path, name: str | None = None) -> Problem:
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise ProblemError(f"{p}: cannot read ({e.strerror or e})") from None
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ProblemError(f"{p}: not a UTF-8 text file") from None
    return problem_from_source(source, name=name or p.stem, path=str(p), level=_level_from_path(str(p)))


def load_problem_folder(folder: str | Path) -> tuple[list[Problem], list[ProblemError]]:
    """Load every .py file under `folder` (recursively). Broken files are returned as errors, not raised,
    so one bad file never hides the rest of a problem set."""
    root = Path(folder)
    if not root.is_dir():
        raise ProblemError(f"{root}: not a folder")
    problems, errors = [], []
    for f in sorted(root.rglob("*.py"), key=_natural_key):
        if f.name.startswith("__"):
            continue
        rel = f.relative_to(root).with_suffix("").as_posix()
        try:
            problems.append(load_problem_file(f, name=rel))
        except ProblemError as e:
            errors.append(e)
    return problems, errors


def _natural_key(p: Path):
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", p.as_posix())]


def builtin_problems() -> list[Problem]:
    problems, errors = load_problem_folder(BUILTIN_DIR)
    if errors:  # a broken built-in is our bug, not the user's
        raise ProblemError("; ".join(str(e) for e in errors))
    return problems


def resolve_problem(spec: str) -> Problem:
    """A built-in name ("level1/1_ReLU", or unique suffix like "1_ReLU") or a path to a problem file."""
    p = Path(spec)
    if p.suffix == ".py" and p.exists():
        return load_problem_file(p)
    builtins = builtin_problems()
    exact = [b for b in builtins if b.name == spec]
    if exact:
        return exact[0]
    matches = [b for b in builtins if b.name.split("/")[-1] == spec or b.name.endswith("/" + spec)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise ProblemError(f"{spec}: ambiguous, matches {', '.join(m.name for m in matches)}")
    raise ProblemError(f"{spec}: no such file or built-in problem (try `kforge problems`)")
