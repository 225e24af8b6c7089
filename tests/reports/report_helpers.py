"""Helpers of the report tests, imported by name (a conftest cannot be: several exist)."""
from __future__ import annotations

import contextlib
import io
import os


@contextlib.contextmanager
def environment(**values: str):
    """Set environment variables for a block (session fixtures cannot use monkeypatch)."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def mlab(*argv: str) -> tuple[int, str, str]:
    """Run the mlab CLI in-process; returns (exit code, stdout, stderr)."""
    from mlab.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()
