"""Options that several verbs share.

Each helper adds one option with the same name, metavar and help wherever it appears, so
`mlab prepare --help` and `mlab audit --help` describe --data and --build alike.
"""
from __future__ import annotations

TASK_HELP = "task name, .mlab file, or build folder"
BUILD_HELP = "take the task from this build (refused if stale)"


def add_task(parser, *, optional: bool = False) -> None:
    """The TASK positional (optional where --resume can stand for it)."""
    parser.add_argument("task", nargs="?" if optional else None, metavar="TASK", help=TASK_HELP)


def add_data(parser, *, default: str | None = "lite") -> None:
    """--data lite|full (default lite; None: not given, so a resume can tell)."""
    parser.add_argument("--data", default=default, choices=("lite", "full"),
                        help="data variant (default lite)")


def add_build(parser, help: str = BUILD_HELP) -> None:
    parser.add_argument("--build", metavar="DIR", help=help)


def add_python(parser, help: str = "interpreter for scripts (default: this one)") -> None:
    parser.add_argument("--python", metavar="P", help=help)


def add_runs_dir(parser) -> None:
    parser.add_argument("--runs-dir", default="runs", metavar="DIR", help="where run folders go (default runs/)")


def add_resume(parser) -> None:
    parser.add_argument("--resume", metavar="RUN_DIR", help="continue this run from its last complete step")


def add_no_tools(parser) -> None:
    """--no-tools: a tool agent runs its declared fallback (text) format instead of tool calls."""
    parser.add_argument("--no-tools", action="store_true",
                        help="run a tool agent in its declared fallback text format, without sending tools "
                             "(for models or servers that cannot take tools)")


def add_plain(parser, help: str) -> None:
    parser.add_argument("--plain", action="store_true", help=help)


def add_json(parser, what: str) -> None:
    """--json: `what` as one JSON document on stdout; every other line goes to stderr."""
    parser.add_argument("--json", action="store_true",
                        help=f"print {what} as one JSON document on stdout (other output goes to stderr)")


def print_json(args, document) -> None:
    """The document of a --json verb, on the stdout the dispatcher kept aside for it."""
    import sys

    from mlab.standard_json import dumps  # standard JSON for other tools: no NaN, no lone surrogate

    print(dumps(document, indent=2, ascii=True), file=getattr(args, "json_stdout", sys.stdout), flush=True)
