"""Where the compiler's test cases live, and how their outputs are made portable."""
from __future__ import annotations

from pathlib import Path

from mlabc.resources import std_dir, tasks_dir

HERE = Path(__file__).resolve().parent
GOLDEN_DIR = HERE / "golden"
ERRORS_DIR = HERE / "errors"
REPO_ROOT = HERE.parent.parent
REPO_TASKS = REPO_ROOT / "tasks"


def normalise_paths(text: str, case_dir: Path) -> str:
    """Replace machine-specific absolute paths by placeholders, so expected files are portable."""
    for path, placeholder in ((std_dir().resolve(), "<std>"), (tasks_dir().resolve(), "<tasks>"),
                              (case_dir.resolve(), "<case>")):
        text = text.replace(str(path), placeholder)
    return text


def valid_sources() -> list[Path]:
    """Every .mlab file shipped in tasks/ and every golden input: all of them check without errors."""
    return sorted(REPO_TASKS.rglob("*.mlab")) + sorted(GOLDEN_DIR.rglob("*.mlab"))
