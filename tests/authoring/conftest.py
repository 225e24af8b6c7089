"""Fixtures of the authoring-tool tests: the repository's sources, their IR, and the CLI."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mlabc.api import check_paths
from mlabc.emit import plan_build

REPO = Path(__file__).resolve().parents[2]
TASKS = REPO / "tasks"
GOLDEN = REPO / "tests" / "compiler" / "golden"


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


@pytest.fixture
def repo_copy(tmp_path) -> Path:
    """A copy of tasks/ and of the golden inputs, to rewrite files in (the std library stays bundled)."""
    shutil.copytree(TASKS, tmp_path / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    if GOLDEN.is_dir():
        shutil.copytree(GOLDEN, tmp_path / "golden", ignore=shutil.ignore_patterns("__pycache__", "build"))
    return tmp_path


def copied(path: Path, root: Path) -> Path:
    """Where a repository source lies inside repo_copy."""
    if path.is_relative_to(TASKS):
        return root / "tasks" / path.relative_to(TASKS)
    return root / "golden" / path.relative_to(GOLDEN)


@pytest.fixture
def mlabc(capsys, monkeypatch):
    """Run `mlabc ARGS...` in a folder; returns (exit code, stdout, stderr)."""
    from mlabc.cli import main

    def run(*args: str, cwd: Path | None = None):
        if cwd is not None:
            monkeypatch.chdir(cwd)
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err
    return run
