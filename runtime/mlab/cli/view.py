"""`mlab view`: a self-contained HTML page of a run, or an index of a folder of runs (mlab.viewer)."""
from __future__ import annotations

from pathlib import Path

from mlab.errors import EXIT_OK, UsageError


def add_arguments(parser) -> None:
    parser.add_argument("path", metavar="RUN_DIR|RUNS_DIR", help="one run folder, or a folder holding runs")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="the HTML file (default RUN_DIR/view.html, or RUNS_DIR/index.html)")


def main(args) -> int:
    from mlab.run.meta import RUN_JSON
    from mlab.viewer.page import write_run_page
    from mlab.viewer.index import write_index

    path = Path(args.path)
    if not path.is_dir():
        raise UsageError(f"{path} is not a folder; give a run folder or a folder holding runs")
    output = Path(args.output) if args.output else None
    if (path / RUN_JSON).is_file():
        written = write_run_page(path, output or path / "view.html")
        print(f"wrote {written}")
    else:
        written, pages = write_index(path, output or path / "index.html")
        print(f"wrote {written} (an index of {pages} run page(s))")
    return EXIT_OK
