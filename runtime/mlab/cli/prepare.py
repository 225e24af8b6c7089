"""`mlab prepare`: prepare a task's data into the cache and say where (and, asked, its checksums)."""
from __future__ import annotations

from pathlib import Path

from mlab.errors import EXIT_OK


def main(args) -> int:
    from mlab.build import resolve_task
    from mlab.data.loaders.remote import REMOTE_SOURCES
    from mlab.data.prepare import checksum_lines, prepare_data

    task = resolve_task(args.task, Path(args.build) if args.build else None)
    prepared = prepare_data(task, args.data)
    state = "already prepared" if prepared.reused else "prepared"
    print(f"{task.name} ({args.data}) {state} in {prepared.folder}")
    for side in ("public", "private"):
        files = sorted(p.relative_to(prepared.folder / side).as_posix()
                       for p in (prepared.folder / side).rglob("*") if p.is_file())
        print(f"  {side}: {', '.join(files) or '(none)'}")
    variant = task.variant(args.data)
    if args.checksums:
        lines, what = checksum_lines(task, args.data, prepared)
        print(f"# SHA-256 of {what}; to record them, paste into the `data {args.data} {{ ... }}` block of "
              f"task {task.name} (in {task.root}):")
        print("\n".join(lines))
    elif variant["checksums"]:
        print(f"  checksums: {len(variant['checksums'])} declared, all verified")
    elif variant["source"]["kind"] in REMOTE_SOURCES:
        print(f"  checksums: none declared; `mlab prepare {task.name} --data {args.data} --checksums` prints "
              f"them for the task")
    return EXIT_OK
