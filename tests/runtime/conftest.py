"""Fixtures of the runtime-core tests: a compiled house-price build, a data cache, runs, a stand-in sandbox.

Nothing here is autouse, so the other runtime tests in this folder are not affected.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # runtime_helpers and stand_in_sandbox are imported by name


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("mlab-cache")


@pytest.fixture
def mlab_env(session_cache, tmp_path, monkeypatch) -> Path:
    """MLAB_CACHE shared by the session (data is prepared once); scikit-learn data in tmp."""
    monkeypatch.setenv("MLAB_CACHE", str(session_cache))
    monkeypatch.setenv("SCIKIT_LEARN_DATA", str(tmp_path / "sklearn-data"))
    return session_cache


@pytest.fixture(scope="session")
def house_build(tmp_path_factory) -> Path:
    """A build of tasks/house-price.mlab (with the std agents it uses), compiled once."""
    from mlabc.api import compile_paths

    out = tmp_path_factory.mktemp("build") / "build"
    compiled, manifest = compile_paths([str(REPO / "tasks" / "house-price.mlab")], out)
    assert manifest is not None, compiled.diagnostics
    return out


@pytest.fixture
def house_task(house_build, mlab_env):
    from mlab.build import load_build

    return load_build(house_build).task("house-price")


@pytest.fixture
def stand_in_sandbox(monkeypatch):
    """Workspace scripts run by the stand-in (plain child process, same API) instead of mlab.sandbox."""
    import stand_in_sandbox as module

    from mlab.actions.scripts import use_script_runner

    previous = use_script_runner(module)
    yield module
    use_script_runner(previous)


@pytest.fixture
def new_run(house_task, tmp_path):
    """A factory of runs of house-price (lite) with the research agent's action table."""
    from mlab.run.folder import Run

    made = []

    def make(**options):
        run = Run.create(house_task, house_task.build.agent(options.pop("agent", "research")),
                         tmp_path / "runs", **options)
        made.append(run)
        return run

    yield make
    for run in made:
        run.close()
