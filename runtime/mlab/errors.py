"""The errors a user of the runtime can cause, each with the CLI exit code it maps to, and how an
error reads in a message (`first_line`, `plain_failure`, `closest_hint`).

One convention for every command: 0 ok, 1 a run (or a check, or a build) failed, 2 usage (bad
arguments, an unknown task, agent or experiment name, a missing API key), 3 I/O (a file that
cannot be read or written), 130 interrupted (Ctrl-C; a run stays resumable).
"""
from __future__ import annotations

import re

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_IO = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a Ctrl-C


def first_line(error: BaseException) -> str:
    """A library's exception in one line for a message: its first line, else its type's name."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


# Where a model failure quotes litellm's own exception after mlab's plain words, as in
# "cannot reach URL: connection refused (InternalServerError: litellm.InternalServerError: ...)".
_WRAPPED_PROVIDER_TEXT = re.compile(r" \((?:[A-Za-z_]\w*: )?litellm\.")


def plain_failure(detail: str) -> str:
    """A run's failure detail as printed: without litellm's wrapped exception text after the plain
    words (result.json and the trace keep the detail whole)."""
    found = _WRAPPED_PROVIDER_TEXT.search(detail)
    return detail[:found.start()] if found else detail


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


def closest_hint(name: str, known) -> str:
    """' (did you mean `x`?)' for the known name closest to a mistyped one, else '': the tail of a
    runtime message about an unknown task, agent or experiment. The closeness is the compiler's
    (mlabc.names.closest, whose use in mlabc.values.did_you_mean makes the compiler's hints, listing the choices)."""
    from mlabc.names import closest

    close = closest(name, known)
    return f" (did you mean `{close}`?)" if close else ""


class StorageError(MlabError):
    """A file the runtime needs cannot be read or written."""

    exit_code = EXIT_IO
