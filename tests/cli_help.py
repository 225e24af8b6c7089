"""What the CLI tests of both commands (mlab, mlabc) share: a parser's help as it is printed, laid
out at a fixed width so that two parsers' helps compare line for line."""
from __future__ import annotations

import argparse
import contextlib
import io

import pytest


def help_text(parser: argparse.ArgumentParser, argv: list[str]) -> str:
    """What `parser` prints for `argv` (a --help), up to its exit."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        parser.parse_args(argv)
    return out.getvalue()


@pytest.fixture(autouse=True)
def fixed_width(monkeypatch):
    """Every help laid out 100 columns wide (a module that imports this fixture gets it for each test)."""
    monkeypatch.setenv("COLUMNS", "100")
