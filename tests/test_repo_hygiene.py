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
