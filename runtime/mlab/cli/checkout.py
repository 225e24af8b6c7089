"""`mlab checkout`: restore the workspace of a step of a run into a folder."""
from __future__ import annotations

from pathlib import Path

from mlab.errors import EXIT_OK
from mlab.text import printable


def add_arguments(parser) -> None:
    parser.add_argument("run", metavar="RUN", help="run folder (runs/<run-id>)")
    parser.add_argument("--step", type=int, metavar="N", help="step (0: as prepared; default: the final "
                        "workspace, for a tree search the submitted node's)")
    parser.add_argument("--node", type=int, metavar="N", help="node N of a tree search")
    parser.add_argument("dir", metavar="DIR", help="empty or new folder to write the files into")


def main(args) -> int:
    from mlab.run.checkout import checkout

    node = getattr(args, "node", None)
    manifest = checkout(Path(args.run), args.step, Path(args.dir), node=node)
    what = f"node {node}" if node is not None else f"step {args.step}" if args.step is not None else "the final workspace"
    print(printable(f"checked out {what} of {args.run} into {args.dir} ({len(manifest)} files)"))
    return EXIT_OK
