"""KForge engine: problems, backends, isolated evaluation, agents and sessions.

Importable and testable without Streamlit (the app in app.py/pages/ sits on top).
"""

from pathlib import Path

__version__ = "0.1.0"

# Built-in problems and examples live beside the package in the repository (design card: top-level assets/).
REPO_ROOT = Path(__file__).resolve().parent.parent
ASSETS_DIR = REPO_ROOT / "assets"
