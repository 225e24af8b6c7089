"""Fixtures of the compiler tests."""
from __future__ import annotations

import pytest


@pytest.fixture
def update_golden(request) -> bool:
    """True when the run was asked to rewrite expected files (`pytest --update-golden`)."""
    return bool(request.config.getoption("--update-golden"))
