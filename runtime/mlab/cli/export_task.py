"""`mlab export-task TASK... --to harbor -o DIR`: tasks as task folders of another runner (Harbor)."""
from __future__ import annotations

from pathlib import Path

from mlab.cli import args as shared
from mlab.errors import EXIT_OK


def add_arguments(parser) -> None:
    parser.add_argument("tasks", nargs="+", metavar="TASK", help=shared.TASK_HELP)
    parser.add_argument("--to", required=True, choices=("harbor",), help="the format to write")
    parser.add_argument("-o", "--output", required=True, metavar="DIR", help="a new or empty folder, one task folder each")
    shared.add_data(parser)
    shared.add_build(parser)
    parser.add_argument("--wheel", metavar="FILE.whl", help="the mlab-harness wheel the verifier installs "
                        "(default: built from this checkout with pip wheel . --no-deps, or for an installed copy "
                        "packed from its installed files)")
    parser.add_argument("--base-image", metavar="IMAGE", help="the Python base image of both environments, e.g. "
                        "pinned by digest (default: python:<this Python's version>-slim-bookworm)")


def main(args) -> int:
    from mlab.export.harbor import Options, check_output, export_tasks

    check_output(Path(args.output))
    tasks = resolve_tasks(args.tasks, Path(args.build) if args.build else None)
    options = Options(variant=args.data, wheel=Path(args.wheel) if args.wheel else None, base_image=args.base_image)
    written = export_tasks(tasks, Path(args.output), options)
    print(f"{len(written)} Harbor task{'s' if len(written) != 1 else ''} in {args.output}; "
          f"check with `harbor lint {args.output}/<task>`, run with `harbor run -p {args.output}/<task>`")
    return EXIT_OK


def resolve_tasks(specs: list[str], build: Path | None) -> list:
    """Every task named, found before anything is written; tasks given by name compiled together."""
    import os

    from mlab.build import SOURCE_SUFFIXES, compile_into_cache, find_task_source, resolve_task

    named = build is None and all(os.sep not in spec and not spec.endswith(SOURCE_SUFFIXES)
                                  and not Path(spec).is_dir() for spec in specs)
    if not named:
        return [resolve_task(spec, build) for spec in specs]
    sources = list(dict.fromkeys(find_task_source(spec) for spec in specs))
    compiled = compile_into_cache(sources)
    return [compiled.task(spec) for spec in specs]
