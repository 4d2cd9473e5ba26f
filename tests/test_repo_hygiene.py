import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _bash_blocks(text: str) -> list[str]:
    return [b.strip() for b in re.findall(r"```bash\n(.*?)```", text, re.S)]


def test_readme_has_exactly_two_setup_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    setup = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    commands = _bash_blocks(setup)
    assert len(commands) == 2
    app_cmd, test_cmd = commands
    assert "streamlit run app.py" in app_cmd and app_cmd.startswith("pip install -r requirements.txt")
    assert "pytest" in test_cmd
    ci = (ROOT / ".ci/run").read_text().splitlines()
    assert test_cmd in ci, "the CI script must run README's test command verbatim"


def test_core_never_imports_streamlit():
    for f in (ROOT / "kforge_core").rglob("*.py"):
        assert not re.search(r"^\s*(import|from)\s+streamlit", f.read_text(), re.M), f


def test_artifact_names_are_spelled_only_in_the_module_that_owns_them():
    from kforge_core import artifacts as A

    names = {v for k, v in vars(A).items() if k.isupper() and isinstance(v, str) and "." in v}
    assert {"program.py", "eval.json", "recommendation.json", "gate.json"} <= names
    owner = ROOT / "kforge_core" / "artifacts.py"
    offenders = []
    for folder in ("kforge_core", "pages", "profiler_adapters"):
        for f in (ROOT / folder).rglob("*.py"):
            if f == owner:
                continue
            text = f.read_text()
            offenders += [f"{f.relative_to(ROOT)}: {n}" for n in names if f'"{n}"' in text or f"'{n}'" in text]
    offenders += [f"app.py: {n}" for n in names if f'"{n}"' in (ROOT / "app.py").read_text()]
    assert not offenders, offenders


def test_pages_never_delete():
    for f in (ROOT / "pages").rglob("*.py"):
        text = f.read_text()
        assert not re.search(r"\b(rmtree|unlink|remove|DELETE FROM|discard\w*)\b", text), f


def test_no_core_module_over_400_lines():
    long = [f"{f.relative_to(ROOT)}: {n}" for f in (ROOT / "kforge_core").rglob("*.py")
            if (n := len(f.read_text().splitlines())) > 400]
    assert not long, long


# Which rooms of kforge_core/evaluation/ each room may import (besides itself and the shared vocabulary:
# result, settings, outcome). The package's __init__ and the entry point `evaluator` may import any room.
EVALUATION_ROOMS = {
    "building": set(),
    "isolation": set(),
    "judging": set(),
    "worker": {"building", "judging"},
}
SHARED_VOCABULARY = {"result", "settings", "outcome"}


def _evaluation_imports(text: str) -> set[str]:
    """The first component under kforge_core.evaluation of every import in `text` ('' for the package)."""
    found = set(re.findall(r"^\s*(?:from|import)\s+kforge_core\.evaluation\.(\w+)", text, re.M))
    found |= {n.strip().split(" as ")[0] for m in re.findall(r"^\s*from kforge_core\.evaluation import ([\w ,]+)", text, re.M)
              for n in m.split(",")}
    return found


def test_evaluation_rooms_import_only_what_they_may():
    base = ROOT / "kforge_core" / "evaluation"
    offenders = []
    for room, allowed in EVALUATION_ROOMS.items():
        assert (base / room / "__init__.py").read_text().startswith('"""'), f"{room} says what it owns"
        for f in (base / room).rglob("*.py"):
            for name in _evaluation_imports(f.read_text()) - {room} - allowed - SHARED_VOCABULARY:
                offenders.append(f"{f.relative_to(ROOT)} imports kforge_core.evaluation.{name}")
    for name in SHARED_VOCABULARY:
        used = _evaluation_imports((base / f"{name}.py").read_text()) - SHARED_VOCABULARY
        offenders += [f"evaluation/{name}.py imports kforge_core.evaluation.{u}" for u in used]
    assert not offenders, offenders


def test_evaluation_never_imports_the_layers_above_it():
    # The evaluator is the bottom layer: profiler adapters (called by the session, CLI and tasks) and pages
    # build on it, never the other way round.
    offenders = [str(f.relative_to(ROOT)) for f in (ROOT / "kforge_core" / "evaluation").rglob("*.py")
                 if re.search(r"^\s*(from|import)\s+(profiler_adapters|pages)\b", f.read_text(), re.M)]
    assert not offenders, offenders


def test_the_pages_folder_holds_only_the_pages_app_py_declares():
    """Streamlit discovers pages/*.py before app.py's st.navigation has run once (a deep link after a server
    start): a helper module there became a blank page of its own. Helpers live in pages/shared/."""
    declared = set(re.findall(r'st\.Page\("(pages/\w+\.py)"', (ROOT / "app.py").read_text()))
    present = {f"pages/{f.name}" for f in (ROOT / "pages").glob("*.py")}
    assert present == declared, (present - declared, declared - present)
