"""`mlabc`: check and compile .mlab files. The dispatcher routes each verb to its module, which
declares its arguments (`add_<verb>`) and does it (`cmd_<verb>`).

Exit codes: 0 ok, 1 diagnostics (errors in the sources), 2 usage, 3 I/O.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    import argparse

EXIT_OK, EXIT_DIAGNOSTICS, EXIT_USAGE, EXIT_IO = 0, 1, 2, 3


# verb → its line in `mlabc --help`, kept here so that listing the verbs builds none of their arguments;
# each verb's module (this one, or authoring/cli.py for AUTHORING) declares its arguments in
# add_<verb>(parser) and does it in cmd_<verb>(args)
SUMMARIES = {
    "check": "check .mlab files and report diagnostics",
    "compile": "check, then write the build folder",
    "schema": "print a JSON Schema of spec/ (list them without NAME), or the catalogue `metrics` or `primitives`",
    "fmt": "rewrite .mlab files in the canonical layout (comments kept)",
    "convert": "translate a file between .mlab and .mlab.yaml",
    "new": "scaffold a new task that passes `mlabc check`",
    "explain": "explain a diagnostic code, with examples (list them without CODE), or the topic `evaluator`",
}
AUTHORING = ("fmt", "convert", "new", "explain")
EVERY_VERB = "*"


def _verb_module(verb: str):
    if verb in AUTHORING:
        from .authoring import cli as authoring

        return authoring
    return sys.modules[__name__]


def _named_verb(argv: list[str] | None) -> str | None:
    """The verb the command line names (its first word that is not an option), if it is one."""
    words = [word for word in (sys.argv[1:] if argv is None else argv) if not word.startswith("-")]
    return words[0] if words and words[0] in SUMMARIES else None


def _parser(wanted: str | None = EVERY_VERB) -> argparse.ArgumentParser:
    """The command line's parser; `wanted` names the one verb whose arguments are built (None: no
    verb's, as for `mlabc --help`; EVERY_VERB: all of them)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="mlabc", description="The compiler of the mlab task language.",
        epilog="exit codes: 0 ok, 1 diagnostics, 2 usage, 3 I/O")
    parser.add_argument("--version", action="store_true", help="print the compiler version")
    verbs = parser.add_subparsers(dest="verb", metavar="COMMAND")
    for verb, summary in SUMMARIES.items():
        verb_parser = verbs.add_parser(verb, help=summary)
        if wanted in (verb, EVERY_VERB):
            getattr(_verb_module(verb), f"add_{verb}")(verb_parser)
    return parser


def add_check(parser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: tasks/)")
    _add_format(parser)
    parser.add_argument("--since", metavar="BUILD", help="a previous build (folder or manifest.json): a change to a "
                        "task's scored parts that keeps its version is an error (E912)")
    parser.add_argument("--no-data", dest="data", action="store_false",
                        help="skip the data model: do not make the variants' data nor check declarations against it")


def add_compile(parser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: tasks/)")
    parser.add_argument("-o", "--output", default="build", metavar="DIR", help="build folder (default: build/)")
    _add_format(parser)


def _add_format(parser) -> None:
    parser.add_argument("--format", choices=("text", "json"), default="text", help="diagnostics format")
    parser.add_argument("--json", dest="format", action="store_const", const="json",
                        help="diagnostics as JSON on stdout, as --format json (the spelling mlab's verbs share)")


def add_schema(parser) -> None:
    parser.add_argument("name", nargs="?", metavar="NAME")
    parser.add_argument("--json", action="store_true", help="a catalogue as JSON (schemas always are)")


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _report(compiled, fmt: str) -> None:
    from .diagnostics import render_all, to_json

    if fmt == "json":
        print(to_json(compiled.diagnostics))
    elif compiled.diagnostics:
        print(render_all(compiled.diagnostics, compiled.program.sources), file=sys.stderr)
        errors = sum(d.severity == "error" for d in compiled.diagnostics)
        print(f"\n{_count(errors, 'error')}", file=sys.stderr)


def cmd_check(args) -> int:
    from .api import check_paths

    compiled = check_paths(args.paths, data=args.data)
    if args.since:
        from .lower.versions import read_previous_manifest, since_diagnostics

        try:
            previous = read_previous_manifest(args.since)
        except (OSError, ValueError) as error:
            print(f"mlabc: {error}", file=sys.stderr)
            return EXIT_IO if isinstance(error, OSError) else EXIT_USAGE
        compiled.diagnostics = sorted(compiled.diagnostics + since_diagnostics(compiled, previous),
                                      key=lambda d: d.sort_key())
    _report(compiled, args.format)
    if compiled.ok and args.format == "text":
        print(f"ok: {_count(len(compiled.program.modules), 'file')}, {_count(len(compiled.tasks), 'task')}, "
              f"{_count(len(compiled.agents), 'agent')}, {_count(len(compiled.experiments), 'experiment')}")
    return EXIT_OK if compiled.ok else EXIT_DIAGNOSTICS


def cmd_compile(args) -> int:
    from .api import compile_paths

    out = Path(args.output)
    compiled, manifest = compile_paths(args.paths, out)
    _report(compiled, args.format)
    if manifest is None:
        return EXIT_DIAGNOSTICS
    if args.format == "text":
        print(f"compiled {_count(len(manifest['tasks']), 'task')}, {_count(len(manifest['agents']), 'agent')}, "
              f"{_count(len(manifest['experiments']), 'experiment')} into {out}/")
    return EXIT_OK


def cmd_schema(args) -> int:
    from .schemas import schema, schema_names

    names = schema_names()
    if args.name in ("metrics", "primitives"):
        from .authoring.catalogues import catalogue_json, catalogue_text

        print(json.dumps(catalogue_json(args.name), indent=2) if args.json else catalogue_text(args.name))
        return EXIT_OK
    if args.name is None:
        print("\n".join(names))
        return EXIT_OK
    if args.name not in names:
        print(f"mlabc: no schema named {args.name!r}; available: {', '.join(names)}, "
              "and the catalogues metrics, primitives", file=sys.stderr)
        return EXIT_USAGE
    print(json.dumps(schema(args.name), indent=2))
    return EXIT_OK


def _plain_check(argv: list[str]):
    """The arguments of `mlabc check [PATH...]` with no option, as argparse would give them, or
    None for any other command line. Building the parser of every verb and its help texts was a
    twentieth of a one-file check; a command line that holds an option goes to argparse."""
    if not argv or argv[0] != "check" or any(arg.startswith("-") for arg in argv[1:]):
        return None
    from types import SimpleNamespace

    return SimpleNamespace(verb="check", paths=list(argv[1:]), format="text", since=None, data=True, version=False)


def main(argv: list[str] | None = None) -> int:
    from . import __version__

    args = _plain_check(sys.argv[1:] if argv is None else list(argv))
    if args is None:
        from .cli_start import parse_command

        args = parse_command(_parser(_named_verb(argv)), argv, "mlabc", __version__)
    if isinstance(args, int):
        return args
    from .api import PathsError
    from .resources import BuildWriteError

    try:
        return getattr(_verb_module(args.verb), f"cmd_{args.verb}")(args)
    except (PathsError, BuildWriteError) as error:
        print(f"mlabc: {error}", file=sys.stderr)
        return EXIT_IO
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
