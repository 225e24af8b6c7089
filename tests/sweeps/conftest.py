"""Fixtures of the sweep tests: a shared data cache, a project folder with the tiny task."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # sweep_helpers is imported by name

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture(scope="session")
def sweep_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("sweep-cache")


@pytest.fixture
def sweep_env(sweep_cache, tmp_path, monkeypatch) -> Path:
    """Runs (child processes included) share one data and baseline cache; sklearn data in tmp."""
    monkeypatch.setenv("MLAB_CACHE", str(sweep_cache))
    monkeypatch.setenv("SCIKIT_LEARN_DATA", str(tmp_path / "sklearn-data"))
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return sweep_cache


@pytest.fixture
def project(tmp_path, sweep_env) -> Path:
    """A project folder holding the tiny task; experiments are written next to it by each test."""
    from sweep_helpers import write_tiny_task

    folder = tmp_path / "project"
    folder.mkdir()
    write_tiny_task(folder)
    return folder
