"""The errors a user of the runtime can cause, each with the CLI exit code it maps to.

One convention for every command: 0 ok, 1 a run (or a check, or a build) failed, 2 usage (bad
arguments, an unknown task, agent or experiment name, a missing API key), 3 I/O (a file that
cannot be read or written), 130 interrupted (Ctrl-C; a run stays resumable).
"""
from __future__ import annotations

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


class UnknownName(UsageError, BuildError):
    """A task, agent or experiment named on the command line that does not exist (a usage error,
    exit 2; still a BuildError for the code that looks names up in a build)."""


def did_you_mean(name: str, known) -> str:
    """' (did you mean `x`?)' for the known name closest to a mistyped one, else ''."""
    import difflib

    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


class StorageError(MlabError):
    """A file the runtime needs cannot be read or written."""

    exit_code = EXIT_IO
