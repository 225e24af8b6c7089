"""Fixtures of the compiler tests."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

# The E515 case of the errors corpus needs a starter file past 20 MB: made here as a sparse file
# (no disk blocks), since a file that size has no place in the repository.
STRAY = Path(__file__).resolve().parent / "errors" / "files" / "big-env" / "stray-checkpoint.bin"


@pytest.fixture(autouse=True, scope="session")
def _oversized_starter_file():
    if not STRAY.is_file() or STRAY.stat().st_size != 110 * 10**6:
        # made under a name of this process's own, outside the corpus, then renamed into place: a
        # parallel worker doing the same never sees a file of the wrong size
        partial = Path(__file__).resolve().parent / f".stray-checkpoint-{os.getpid()}.partial"
        with partial.open("wb") as file:
            file.truncate(110 * 10**6)
        os.replace(partial, STRAY)


@pytest.fixture
def update_golden(request) -> bool:
    """True when the run was asked to rewrite expected files (`pytest --update-golden`)."""
    return bool(request.config.getoption("--update-golden"))
