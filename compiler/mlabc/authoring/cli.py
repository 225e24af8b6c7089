"""The authoring verbs of `mlabc`: fmt, convert, new and explain, each its arguments (add_<verb>) and
its command (cmd_<verb>), which cli.py routes to.

Exit codes as for every verb: 0 ok, 1 diagnostics (or files that need formatting with
`fmt --check`), 2 usage, 3 I/O.
"""
from __future__ import annotations

import sys
from pathlib import Path

EXIT_OK, EXIT_DIAGNOSTICS, EXIT_USAGE, EXIT_IO = 0, 1, 2, 3


def add_fmt(parser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: tasks/)")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; list the files that would change and exit 1 if any")
    parser.add_argument("--diff", action="store_true", help="change nothing; print what would change")


def add_convert(parser) -> None:
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--to", choices=("yaml", "mlab"), help="the form to write (default: the other one)")
    parser.add_argument("-o", "--output", metavar="OUT", help="where to write (default: next to FILE)")
    parser.add_argument("--force", action="store_true", help="overwrite OUT if it exists")


def add_new(parser) -> None:
    parser.add_argument("kind", choices=("task", "demo"),
                        help="what to make: a task, or a demonstration built from a solution folder")
    parser.add_argument("name", metavar="NAME", help="the task's name, e.g. my-task (for demo: the solution folder)")
    parser.add_argument("--from", dest="template", metavar="TASK", help="copy this existing task instead")
    parser.add_argument("--dir", default="tasks", metavar="DIR", help="where to put it (default: tasks/)")
    parser.add_argument("--steps", metavar="FILE", help="demo: the steps, one action a line (default: write the "
                        "solution's scripts, run the first, validate, finish)")
    parser.add_argument("-o", "--output", metavar="FILE", help="demo: where to write it (default: demo.json beside "
                        "the solution folder)")


def add_explain(parser) -> None:
    parser.add_argument("code", nargs="?", metavar="CODE", help="e.g. E302, or evaluator (its contract)")


def _render(diagnostics) -> None:
    from ..diagnostics import SourceCache, render_all

    print(render_all(diagnostics, SourceCache()), file=sys.stderr)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def cmd_fmt(args) -> int:
    from .fmt import format_files, mlab_files

    paths = args.paths or (["tasks"] if Path("tasks").is_dir() else [])
    if not paths:
        print("mlabc fmt: name the files or folders to format (there is no tasks/ here)", file=sys.stderr)
        return EXIT_USAGE
    files, missing = mlab_files(paths)
    if missing:
        print("mlabc fmt: no such file or folder: " + ", ".join(missing), file=sys.stderr)
        return EXIT_IO
    others = [f for f in files if not f.name.endswith(".mlab")]
    if others:
        print(f"mlabc fmt: formats .mlab files only; not {', '.join(map(str, others))} "
              "(YAML-form files are written by `mlabc convert`)", file=sys.stderr)
        return EXIT_USAGE
    dry = args.check or args.diff
    report = format_files(files, write=not dry, want_diff=args.diff)
    for path in report.changed:
        if args.diff:
            sys.stdout.write(report.diffs[path])
        else:
            print(f"would reformat {path}" if dry else f"reformatted {path}")
    if report.diagnostics:
        _render(report.diagnostics)
    for failure in report.failures:
        print(f"mlabc fmt: {failure}", file=sys.stderr)
    verb = "would be reformatted" if dry else "reformatted"
    summary = f"{_plural(len(report.changed), 'file')} {verb}, {len(report.unchanged)} already formatted"
    if report.diagnostics or report.failures:
        summary += f", {_plural(len(report.diagnostics) + len(report.failures), 'file')} with errors left alone"
    print(summary, file=sys.stderr)
    if report.diagnostics or report.failures or (args.check and report.changed):
        return EXIT_DIAGNOSTICS
    return EXIT_OK


def cmd_convert(args) -> int:
    from .convert import convert_file
    from ..diagnostics import DiagnosticError
    from ..yaml.write import ConvertError

    source = Path(args.file)
    if not source.is_file():
        print(f"mlabc convert: no such file: {source}", file=sys.stderr)
        return EXIT_IO
    try:
        output, target = convert_file(source, args.to, Path(args.output) if args.output else None, args.force)
    except DiagnosticError as error:
        _render(error.diagnostics)
        return EXIT_DIAGNOSTICS
    except ConvertError as error:
        print(f"mlabc convert: {error}", file=sys.stderr)
        return EXIT_IO if "exists" in str(error) else EXIT_DIAGNOSTICS
    except OSError as error:
        print(f"mlabc convert: {error.strerror or error}: {error.filename or ''}", file=sys.stderr)
        return EXIT_IO
    print(f"wrote {output}")
    if output.parent.resolve() == source.parent.resolve():
        print(f"note: {source.name} and {output.name} now declare the same things; `mlabc check` on their "
              f"folder would report each declaration twice (E301), so keep only one of them", file=sys.stderr)
    return EXIT_OK


def cmd_new_demo(args) -> int:
    import json

    from .demo_builder import DemoBuildError, build_demonstration

    solution = Path(args.name)
    output = Path(args.output) if args.output else solution.parent / "demo.json"
    try:
        steps = Path(args.steps).read_text(encoding="utf-8") if args.steps else None
        document = build_demonstration(solution, steps, args.steps or "steps")
        output.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    except DemoBuildError as error:
        print(f"mlabc new demo: {error}", file=sys.stderr)
        return EXIT_USAGE
    except (OSError, UnicodeDecodeError) as error:
        print(f"mlabc new demo: {getattr(error, 'strerror', None) or error}: {getattr(error, 'filename', '') or ''}",
              file=sys.stderr)
        return EXIT_IO
    print(f"wrote {output} ({len(document['steps'])} steps)")
    return EXIT_OK


def cmd_new(args) -> int:
    from .scaffold import ScaffoldError, new_task

    if args.kind == "demo":
        return cmd_new_demo(args)

    try:
        made = new_task(args.name, Path(args.dir), args.template)
    except ScaffoldError as error:
        print(f"mlabc new: {error}", file=sys.stderr)
        return EXIT_USAGE if "cannot name" in str(error) or "no task named" in str(error) else EXIT_IO
    except OSError as error:
        print(f"mlabc new: {error.strerror or error}: {error.filename or ''}", file=sys.stderr)
        return EXIT_IO
    for path in made.files:
        print(f"created {path}")
    print(f"next: fill in the TODOs, run `mlabc check {made.mlab}`, and try the task with "
          f"`mlab run {made.mlab} --model mlab/demo`", file=sys.stderr)
    return EXIT_OK


def cmd_explain(args) -> int:
    from ..codes import CODES
    from .explain.lookup import listing, normalise_code, render
    from ..values import did_you_mean

    from .explain.topics import TOPICS

    if args.code is None:
        sys.stdout.write(listing())
        return EXIT_OK
    if args.code.lower() in TOPICS:
        sys.stdout.write(TOPICS[args.code.lower()])
        return EXIT_OK
    code = normalise_code(args.code)
    if code not in CODES:
        print(f"mlabc explain: no diagnostic code {args.code!r}; {did_you_mean(code, CODES, 'codes')}",
              file=sys.stderr)
        return EXIT_USAGE
    sys.stdout.write(render(code))
    return EXIT_OK

