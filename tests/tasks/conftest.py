"""Fixtures of the task-suite tests: one build of all 13 tasks, one data cache, one audit per task.

Everything expensive (compiling, preparing lite data, running a starter) happens once per
session: the audits run each task's starter once, and the baseline tests read their reports.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # task_helpers is imported by name

from task_helpers import REPO, TASKS  # noqa: E402


@pytest.fixture(scope="session")
def suite_cache(tmp_path_factory):
    """MLAB_CACHE (and scikit-learn's data folder) for the whole session, so data is prepared once."""
    cache = tmp_path_factory.mktemp("mlab-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLAB_CACHE", str(cache))
        patch.setenv("SCIKIT_LEARN_DATA", str(tmp_path_factory.mktemp("sklearn-data")))
        yield cache


@pytest.fixture(scope="session")
def suite_build(tmp_path_factory, suite_cache):
    """All thirteen tasks compiled together."""
    from mlab.build import load_build
    from mlabc.api import compile_paths

    out = tmp_path_factory.mktemp("suite-build") / "build"
    compiled, manifest = compile_paths([str(REPO / "tasks" / f"{name}.mlab") for name in TASKS], out)
    assert manifest is not None, [str(d) for d in compiled.diagnostics]
    return load_build(out)


@pytest.fixture(scope="session")
def task_of(suite_build):
    return suite_build.task


@pytest.fixture(scope="session")
def prepared(task_of):
    """The lite preparation of a task in the session cache (made once)."""
    from mlab.data.prepare import prepare_data

    made = {}

    def get(name: str):
        if name not in made:
            made[name] = prepare_data(task_of(name), "lite")
        return made[name]

    return get


@pytest.fixture(scope="session")
def audit_of(task_of):
    """The audit report of a task's lite variant (each audit, with its starter run, made once)."""
    from mlab.audit.checks import audit_task

    reports = {}

    def get(name: str):
        if name not in reports:
            reports[name] = audit_task(task_of(name), "lite")
        return reports[name]

    return get


@pytest.fixture
def task_copy(tmp_path):
    """Copy a task (its .mlab and folder) into a tasks/ folder of its own, optionally edited, and compile it."""
    made = []

    def make(name: str, edit=None):
        made.append(name)
        root = tmp_path / f"copy-{len(made)}" / "tasks"
        root.mkdir(parents=True)
        shutil.copyfile(REPO / "tasks" / f"{name}.mlab", root / f"{name}.mlab")
        shutil.copytree(REPO / "tasks" / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        if edit is not None:
            edit(root)
        from mlab.build import load_build
        from mlabc.api import compile_paths

        out = root.parent / "build"
        compiled, manifest = compile_paths([str(root / f"{name}.mlab")], out)
        assert manifest is not None, [str(d) for d in compiled.diagnostics]
        return load_build(out).task(name)

    return make
