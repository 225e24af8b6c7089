"""Fixtures of the authoring-tool tests: a copy of the sources to rewrite, and the CLI."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from authoring_cases import GOLDEN, TASKS


@pytest.fixture
def repo_copy(tmp_path) -> Path:
    """A copy of tasks/ and of the golden inputs, to rewrite files in (the std library stays bundled)."""
    shutil.copytree(TASKS, tmp_path / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    if GOLDEN.is_dir():
        shutil.copytree(GOLDEN, tmp_path / "golden", ignore=shutil.ignore_patterns("__pycache__", "build"))
    return tmp_path


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
