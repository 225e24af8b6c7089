"""Options and scheduling of the whole test suite (pytest reads options only from a root conftest).

The suite runs in parallel worker processes (pytest-xdist; `-n auto --dist loadgroup` in
pyproject.toml's addopts). What is expensive to make is made once per worker, so the tests that
share it are kept on one worker (the groups of suite_groups.py), and the slow tier is handed out
first, so that no long test is left running alone at the end.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from code_size import long_functions
from suite_groups import scheduler, slow_first, workers  # tests/ is on the path, as for layering


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite the expected files of the compiler's golden and error tests "
                          "from the current compiler output, instead of comparing with them")


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """Workers for `-n auto` (suite_groups.workers); PYTEST_XDIST_AUTO_NUM_WORKERS, pytest-xdist's
    own variable, sets the number instead."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist reads it
    return workers(config.args, Path(config.invocation_params.dir), len(os.sched_getaffinity(0)))


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadgroup` keeps the groups of suite_groups.group_of on one worker each."""
    return scheduler(config, log) if config.getvalue("dist") == "loadgroup" else None


def pytest_collection_modifyitems(config, items):
    if hasattr(config, "workerinput"):  # the order a worker reports, and so is handed, its tests
        items[:] = slow_first(items)


def pytest_terminal_summary(terminalreporter):
    """The modules past about 500 lines, named at the end of every run: the rule is one job per
    module, so a long one is a prompt to look for a second job in it, never a failure, and never a
    reason to cut one job in two (docs/architecture.md, Conventions)."""
    root = Path(__file__).resolve().parent.parent
    long = [f"{path.relative_to(root)}: {lines} lines" for folder in ("runtime/mlab", "compiler/mlabc")
            for path in sorted((root / folder).rglob("*.py")) if "__pycache__" not in path.parts
            for lines in [len(path.read_text(encoding="utf-8").splitlines())] if lines > 500]
    if long:
        terminalreporter.section("modules past about 500 lines: one job, or two?")
        for line in long:
            terminalreporter.line(line)
    functions = long_functions(root)
    if functions:
        terminalreporter.section("functions past 60 lines: split them into named steps")
        for line in functions:
            terminalreporter.line(line)

