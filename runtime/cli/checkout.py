"""`mlab checkout`: restore the workspace of a step of a run into a folder."""
from __future__ import annotations

from pathlib import Path

from mlab.errors import EXIT_OK


def main(args) -> int:
    from mlab.run.checkout import checkout

    manifest = checkout(Path(args.run), args.step, Path(args.dir))
    print(f"checked out step {args.step} of {args.run} into {args.dir} ({len(manifest)} files)")
    return EXIT_OK
