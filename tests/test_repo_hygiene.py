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
