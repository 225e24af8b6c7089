"""`mlab export-task TASK... --to harbor -o DIR`: tasks as task folders of another runner (Harbor)."""
from __future__ import annotations

from pathlib import Path

from mlab.errors import EXIT_OK


def main(args) -> int:
    from mlab.build import resolve_task
    from mlab.export.harbor import Options, export_tasks

    build = Path(args.build) if args.build else None
    tasks = [resolve_task(spec, build) for spec in args.tasks]  # every task is found before anything is written
    options = Options(variant=args.data, wheel=Path(args.wheel) if args.wheel else None, base_image=args.base_image)
    written = export_tasks(tasks, Path(args.output), options)
    print(f"{len(written)} Harbor task{'s' if len(written) != 1 else ''} in {args.output}; "
          f"check with `harbor lint {args.output}/<task>`, run with `harbor run -p {args.output}/<task>`")
    return EXIT_OK
