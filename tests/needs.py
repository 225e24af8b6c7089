"""What a test does when a tool it needs is missing: it skips, saying what to install, except under
`CI=true`, where it fails. CI installs every tool (.ci/run stops when it cannot), so a test skipped
there would hide a feature nobody checked.

The tools: bubblewrap (the sandbox), Chromium (the viewer), Harbor (the export's lint), node with the
TextMate engine (the editor grammar), an outside agent's package (from PyPI), and the test extras
(`pip install -e '.[test]'`: torch, ray, inspect-ai, atif, gymnasium). Every such skip in tests/
goes through `missing`, `needs` or `module`; tests/test_suite_settings.py checks that none is written
another way. A skip for what no CI machine has (root, a delegated cgroup) stays a plain skip.

The project's own modules are imported plainly: a broken import must fail, never skip.
"""
from __future__ import annotations

import functools
import importlib
import os
from types import ModuleType
from typing import NoReturn

import pytest


def on_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def missing(reason: str) -> NoReturn:
    """The test cannot run here for a missing tool (`reason` says which and how to install it):
    skipped, or failed under CI=true."""
    if on_ci():
        pytest.fail(f"CI=true, and a tool this test needs is missing: {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def needs(problem: str | None):
    """A decorator: the test runs where `problem` is None, else it is `missing(problem)`."""
    def mark(test):
        if problem is None:
            return test

        @functools.wraps(test)
        def without_the_tool(*args, **kwargs):
            missing(problem)

        return without_the_tool
    return mark


def module(name: str, reason: str) -> ModuleType:
    """A third-party module a test needs (never one of mlab's own), or `missing(reason)`."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        if name.split(".")[0] in ("mlab", "mlabc"):
            raise
        missing(f"{reason} ({error})")
