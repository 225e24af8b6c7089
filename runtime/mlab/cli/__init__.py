"""`mlab`: the runtime's command line. This module only routes: each verb's module under mlab.cli
declares its arguments, description and epilog (`add_arguments(parser)`) and does the work
(`main(args)`); it is imported only when its verb runs, so that `mlab --help` imports none of them.

Exit codes (mlab.errors): 0 ok, 1 the run (or a check, a build, the data) failed, 2 usage (bad
arguments, an unknown task, agent or experiment, a missing API key), 3 I/O (a file that cannot be
read or written), 130 interrupted.
Heavy libraries (pandas, scikit-learn, litellm) are imported only by the commands that need them.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys

from mlab.errors import EXIT_INTERRUPTED, EXIT_IO, EXIT_OK, MlabError
from mlab.text import NOTED, printable

__all__ = ["COMMANDS", "main"]

# verb → the module under mlab.cli that declares its arguments and does it, in the order `mlab --help` lists them
COMMANDS = {"prepare": "prepare", "drive": "drive", "run": "run", "list": "list", "eval": "eval",
            "report": "report", "view": "view", "sweep": "sweep", "baseline": "baseline", "lock": "lock",
            "probe": "probe", "audit": "audit", "checkout": "checkout", "export": "export",
            "export-task": "export_task"}

# verb → its line in `mlab --help`: kept here, so that listing the verbs imports none of their modules
SUMMARIES = {
    "prepare": "prepare a task's data into the cache and say where",
    "drive": "run a JSON list of actions through a run (scripted driver)",
    "run": "run an agent on a task until it submits, then score it",
    "list": "list the tasks (data variants, hardware), agents and experiments",
    "eval": "score runs: one row per run (final and best score, usage, failures)",
    "report": "tables and plots over a folder of runs (Markdown, CSV, LaTeX, PNG)",
    "view": "a self-contained HTML page of a run, or an index of a folder of runs",
    "sweep": "run an experiment: tasks × agents × models × seeds, then report",
    "baseline": "run a task's starter in the sandbox and report (or record) its score",
    "lock": "check whether this checkout would reproduce a run (its lock.json)",
    "probe": "how familiar a model is with a task: its canary and prefixes of its texts, against shuffled controls",
    "audit": "check a task: no answer leaks, sandbox confinement, baseline, prompt",
    "checkout": "restore the workspace of a step of a run, or of a node of a tree search, into a folder",
    "export": "write runs in another tool's format: ATIF trajectories, Inspect logs, an MLE-bench grading report",
    "export-task": "write tasks as another runner's task folders: Harbor",
}

EVERY_VERB = "*"


def _at_width(layout: type[argparse.HelpFormatter]) -> type[argparse.HelpFormatter]:
    """A help layout (argparse's formatter class) at the terminal's width, found without importing
    shutil, which argparse imports for it in every parser: a little less for `mlab` to start."""

    class AtWidth(layout):
        def __init__(self, prog, **kwargs):
            kwargs.setdefault("width", _columns() - 2)
            super().__init__(prog, **kwargs)

    return AtWidth


_Formatter = _at_width(argparse.HelpFormatter)
_LAYOUTS = {argparse.HelpFormatter: _Formatter, _Formatter: _Formatter}


def _columns() -> int:
    """The terminal's width as shutil.get_terminal_size() gives it: $COLUMNS, the terminal, 80."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


def _named_verb(argv: list[str] | None) -> str | None:
    """The verb the command line names (its first word that is not an option), if it is one."""
    words = [word for word in (sys.argv[1:] if argv is None else argv) if not word.startswith("-")]
    return words[0] if words and words[0] in COMMANDS else None


def _verb_module(verb: str):
    return importlib.import_module(f"mlab.cli.{COMMANDS[verb]}")


def build_parser(wanted: str | None = EVERY_VERB) -> argparse.ArgumentParser:
    """The command line's parser; `wanted` names the one verb whose module adds its arguments (None:
    no verb's, as for `mlab --help`, which lists the verbs only; EVERY_VERB: all of them)."""
    parser = argparse.ArgumentParser(
        prog="mlab", description="The mlab runtime: runs compiled mlab tasks and agents.",
        epilog="exit codes: 0 ok, 1 failed (a run, a check, a build), 2 usage (bad arguments, unknown "
               "names, a missing key), 3 I/O, 130 interrupted", formatter_class=_Formatter)
    parser.add_argument("--version", action="store_true", help="print the runtime version")
    verbs = parser.add_subparsers(dest="verb", metavar="COMMAND")
    for verb in COMMANDS:
        verb_parser = verbs.add_parser(verb, help=SUMMARIES[verb], formatter_class=_Formatter)
        if wanted in (verb, EVERY_VERB):
            _verb_module(verb).add_arguments(verb_parser)
            layout = verb_parser.formatter_class  # a verb may choose another layout, laid out at this width too
            if layout not in _LAYOUTS:
                _LAYOUTS[layout] = _at_width(layout)
            verb_parser.formatter_class = _LAYOUTS[layout]
    return parser


def main(argv: list[str] | None = None) -> int:
    from mlabc.cli_start import parse_command

    from mlab import __version__

    args = parse_command(build_parser(_named_verb(argv)), argv, "mlab", __version__)
    if isinstance(args, int):
        return args
    NOTED.clear()   # each command says its notes about a run folder's files once (mlab.text.note_once)
    try:
        verb = _verb_module(args.verb)
        if getattr(args, "json", False):
            # --json: stdout carries the one JSON document (args.print_json); the rest goes to stderr.
            args.json_stdout = sys.stdout
            with contextlib.redirect_stdout(sys.stderr):
                return verb.main(args)
        return verb.main(args)
    except MlabError as problem:
        print(f"mlab: {printable(problem)}", file=sys.stderr)   # a message may quote what an agent made
        return problem.exit_code
    except BrokenPipeError:
        return EXIT_OK
    except OSError as problem:
        print(printable(f"mlab: {problem.strerror or problem}: {problem.filename or ''}".rstrip(": ")), file=sys.stderr)
        return EXIT_IO
    except KeyboardInterrupt:
        print("mlab: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
