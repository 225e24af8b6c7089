"""The errors a user of the runtime can cause, each with the CLI exit code it maps to."""
from __future__ import annotations

import re

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_IO = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a Ctrl-C

# The distribution's name (pyproject.toml): PyPI's `mlab` is another project, so the commands
# and packages are mlab and mlabc but the distribution is not.
DISTRIBUTION = "mlab-harness"


def install_hint(extra: str) -> str:
    """The command that adds an optional dependency group (pyproject.toml's extras) to this mlab:
    in a source checkout (an editable install), reinstall the checkout with the extra; otherwise
    name the installed distribution, which pip finds installed and only adds the extra's packages to."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    if (root / "pyproject.toml").is_file() and (root / "runtime" / "errors.py").is_file():
        where = "." if Path.cwd().resolve() == root else str(root)
        return f"pip install -e '{where}[{extra}]'"
    return f"pip install '{DISTRIBUTION}[{extra}]'"


# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides and isolates
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: object) -> str:
    """Text for the operator's terminal: every control character but newline and tab is written
    as its escape (ESC as \\x1b, U+202E as \\u202e), so that what an agent or its scripts made
    cannot set a window title, reach the clipboard (OSC 52), clear the screen or reorder a line.
    Every print of such text goes through here; rich shows it as a `rich.text.Text`, never as markup."""
    return _UNPRINTABLE.sub(_escape, str(text))


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def first_line(error: BaseException) -> str:
    """A library's exception in one line for a message: its first line, else its type's name."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


class MlabError(Exception):
    """A problem to show the user as one clear message (never a traceback)."""

    exit_code = EXIT_FAILED


class BuildError(MlabError):
    """A build cannot be used: missing, invalid, stale, or made by another compiler."""


class DataError(MlabError):
    """A data variant cannot be prepared."""


class RunError(MlabError):
    """A run folder cannot be created, resumed or read."""


class UsageError(MlabError):
    """A command was called with arguments that cannot work together."""

    exit_code = EXIT_USAGE


class StorageError(MlabError):
    """A file the runtime needs cannot be read or written."""

    exit_code = EXIT_IO
