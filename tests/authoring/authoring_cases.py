"""Where the authoring tests find the repository's sources, and how they compare programs."""
from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

from mlabc.api import check_paths
from mlabc.parser import parse_text
from mlabc.program.emit import plan_build

REPO = Path(__file__).resolve().parents[2]
TASKS = REPO / "tasks"
GOLDEN = REPO / "tests" / "compiler" / "golden"


def comment_texts(text: str, path: str) -> list[str]:
    """The comments of a .mlab text, in order."""
    comments: list = []
    parse_text(text, path, comments)
    return [c.text for c in comments]


def source_files() -> list[Path]:
    """Every .mlab file in tasks/ and every golden input: all of them check clean."""
    return sorted(TASKS.rglob("*.mlab")) + (sorted(GOLDEN.rglob("*.mlab")) if GOLDEN.is_dir() else [])


def source_id(path: Path) -> str:
    return str(path.relative_to(REPO))


def build_of(paths: list[Path]) -> dict[str, str]:
    """The build artifacts (IR as written) of a program, or the diagnostics as text when it has errors."""
    compiled = check_paths([str(p) for p in paths])
    if not compiled.ok:
        return {"diagnostics": "\n".join(f"{d.code} {d.message}" for d in compiled.diagnostics)}
    return plan_build(compiled)


def copied(path: Path, root: Path) -> Path:
    """Where a repository source lies inside repo_copy."""
    if path.is_relative_to(TASKS):
        return root / "tasks" / path.relative_to(TASKS)
    return root / "golden" / path.relative_to(GOLDEN)


# ---- mutations of real files, for property tests ----------------------------------

SMALL_SOURCES = [p for p in source_files() if p.stat().st_size < 6000]


@st.composite
def mutated(draw, changes: int = 8):
    text = draw(st.sampled_from(SMALL_SOURCES)).read_text(encoding="utf-8")
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, changes))):
        where = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["indent", "blank", "comment", "trailing", "spaces", "drop-blank",
                                       "split", "join"]))
        line = lines[where]
        if action == "indent":
            lines[where] = " " * draw(st.integers(0, 9)) + line.lstrip(" ")
        elif action == "blank":
            lines.insert(where, "")
        elif action == "comment":
            lines.insert(where, " " * draw(st.integers(0, 6)) + "# note " + str(where))
        elif action == "trailing":
            lines[where] = line + draw(st.sampled_from(["  # why", " #x", "\t# tab"]))
        elif action == "spaces":
            lines[where] = line.replace(" ", "   ", 1)
        elif action == "drop-blank" and not line.strip():
            del lines[where]
        elif action == "split" and " " in line.strip():
            spaces = [i for i, c in enumerate(line) if c == " " and line[:i].strip()]
            cut = draw(st.sampled_from(spaces))
            lines[where:where + 1] = [line[:cut], line[cut + 1:]]
        elif action == "join" and where + 1 < len(lines):
            lines[where:where + 2] = [line + " " + lines[where + 1].strip()]
    return "\n".join(lines)
