"""The errors a user of the runtime can cause, each with the CLI exit code it maps to.

One convention for every command: 0 ok, 1 a run (or a check, or a build) failed, 2 usage (bad
arguments, an unknown task, agent or experiment name, a missing API key), 3 I/O (a file that
cannot be read or written), 130 interrupted (Ctrl-C; a run stays resumable).
"""
from __future__ import annotations

import re

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_IO = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a Ctrl-C

# The distribution's name (pyproject.toml): PyPI's `mlab` is another project, so the commands
# and packages are mlab and mlabc but the distribution is not.
DISTRIBUTION = "mlab-harness"


def install_hint(extra: str) -> str:
    """The command that adds an optional dependency group (pyproject.toml's extras) to this mlab,
    runnable as printed for the way it was installed: a source checkout (an editable install) is
    reinstalled editable with the extra; a copy installed from a checkout folder or a wheel file
    that is still there is reinstalled from it with the extra; otherwise (the distribution is on
    no index) the extra's own packages are named."""
    from pathlib import Path

    kind, where = installed_origin()
    if kind in ("checkout", "folder"):
        shown = "." if Path.cwd().resolve() == where else str(where)
        return f"pip install {'-e ' if kind == 'checkout' else ''}'{shown}[{extra}]'"
    if kind == "wheel":
        return f"pip install '{where}[{extra}]'"
    packages = extra_requirements(extra)
    if not packages:
        return f"install the packages of the `{extra}` extra of {DISTRIBUTION} (its pyproject.toml lists them)"
    return "pip install " + " ".join(f"'{p}'" for p in packages)


def installed_origin():
    """Where this mlab comes from: ("checkout", folder) when it runs from a source checkout (an
    editable install or the folder itself); ("folder", folder) or ("wheel", file) when a copy was
    installed from a checkout folder or a wheel file that still exists, as pip recorded it (PEP
    610's direct_url.json); ("installed", None) otherwise."""
    import json
    from pathlib import Path
    from urllib.parse import unquote, urlparse

    from mlabc.shared import checkout_root

    root = checkout_root()
    if root is not None and (root / "runtime" / "mlab" / "errors.py").resolve() == Path(__file__).resolve():
        return "checkout", root
    dist = installed_distribution()
    try:
        record = json.loads(dist.read_text("direct_url.json") or "{}") if dist is not None else {}
    except ValueError:
        record = {}
    url = urlparse(str(record.get("url", "")))
    path = Path(unquote(url.path)) if url.scheme == "file" else None
    if path is not None and "dir_info" in record and (path / "pyproject.toml").is_file():
        return "folder", path.resolve()
    if path is not None and "archive_info" in record and path.suffix == ".whl" and path.is_file():
        return "wheel", path.resolve()
    return "installed", None


def installed_distribution():
    """The installed distribution this mlab's files belong to (importlib.metadata), else None."""
    from importlib import metadata
    from pathlib import Path

    try:
        dist = metadata.distribution(DISTRIBUTION)
        ours = Path(str(dist.locate_file("mlab/errors.py"))).resolve() == Path(__file__).resolve()
    except (metadata.PackageNotFoundError, OSError):
        return None
    return dist if ours else None


def extra_requirements(extra: str) -> list[str]:
    """The requirements an extra adds, as the installed metadata lists them (markers dropped)."""
    dist = installed_distribution()
    found = []
    for line in (dist.requires or []) if dist is not None else []:
        requirement, _, marker = line.partition(";")
        if marker and f'extra == "{extra}"' in marker.replace("'", '"'):
            found.append(requirement.strip().replace(" ", ""))
    return found


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
    (mlabc.values.closest, whose did_you_mean makes the compiler's hints, listing the choices)."""
    from mlabc.shared import closest

    close = closest(name, known)
    return f" (did you mean `{close}`?)" if close else ""


class StorageError(MlabError):
    """A file the runtime needs cannot be read or written."""

    exit_code = EXIT_IO
