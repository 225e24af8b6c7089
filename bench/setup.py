"""Benchmark of setting up a run (Run.create) as its data grows: read-only and writable data.

A synthetic task has a folder of random data files of the given size (files of 64 MB at most);
it is set up three ways, each after one untimed set-up that prepares the data and records its
digests (that first set-up's time is printed too):

- without the data (a task whose only data file is 1 KB): the set-up every run pays;
- with the data read-only (the task's `read_only` covers it): target at most 1.2x the set-up
  without it, whatever its size (each file is a hard link to the prepared cache, never read);
- with the data writable: target at most 1.5x a plain `cp -r` of the data folder (MLAgentBench's
  set-up), since each file is copied once and not hashed.

Read-only data is linked only where scripts run in bubblewrap (else it is copied): the script
says which. Each figure is the median of --repeats set-ups, run folders removed between them.

    python bench/setup.py [--sizes 0.1,1] [--repeats 5] [--dir DIR] [--quick]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FILE_BYTES = 64 << 20


def make_data(folder: Path, size: int) -> list[str]:
    """Random files adding up to `size` bytes; their names."""
    folder.mkdir(parents=True)
    names, index = [], 0
    while size > 0:
        part = min(FILE_BYTES, size)
        with open(folder / f"part{index:03d}.bin", "wb") as handle:
            for _ in range(0, part, 1 << 20):
                handle.write(os.urandom(min(1 << 20, part)))
            handle.truncate(part)
        names.append(f"part{index:03d}.bin")
        size -= part
        index += 1
    return names


def make_task(folder: Path, name: str, data: str, files: list[str]) -> Path:
    (folder / "env").mkdir(parents=True, exist_ok=True)
    (folder / "env" / "train.py").write_text("print('hello')\n")
    source = folder / f"{name}.mlab"
    source.write_text(textwrap.dedent("""\
        use std "agents"
        task NAME {
          title "Benchmark task"
          category canonical
          problem "Train."
          starter "env"
          data lite { from folder "DATA" split none public [PUBLIC] }
          metric mae on "y" lower_is_better
          baseline run "train.py"
        }
        """).replace("NAME", name).replace("DATA", data).replace("PUBLIC", ", ".join(f'"{f}"' for f in files)))
    return source


def with_read_only(task, patterns: list[str]):
    from mlab.build import TaskBuild

    return TaskBuild(task.name, dict(task.doc, read_only=patterns), task.build)


def time_setups(task, runs: Path, repeats: int) -> tuple[float, float, bool]:
    """(first set-up, median of the next `repeats`, whether the first data file was linked)."""
    from mlab.run.folder import Run

    times, linked = [], False
    for index in range(repeats + 1):
        started = time.perf_counter()
        run = Run.create(task, task.build.agent("research"), runs)
        times.append(time.perf_counter() - started)
        data = sorted(run.workspace.root.glob("part*.bin"))
        linked = bool(data) and os.stat(data[0]).st_nlink > 1
        run.close()
        shutil.rmtree(run.dir)
    return times[0], statistics.median(times[1:]), linked


def time_copy(source: Path, target: Path, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run(["cp", "-r", str(source), str(target)], check=True)
        times.append(time.perf_counter() - started)
        shutil.rmtree(target)
    return statistics.median(times)


def measure(where: Path, size: int, repeats: int) -> dict:
    from mlab.build import resolve_task
    from mlab.data.prepare import prepare_data

    from mlab.cache import SETTLED_S

    src = where / "src"
    files = make_data(src / "data", size)
    time.sleep(SETTLED_S)   # a source file's digest is remembered once it has settled (mlab.cache)
    (src / "tiny").mkdir()
    (src / "tiny" / "part000.bin").write_bytes(os.urandom(1024))
    big = resolve_task(str(make_task(src, "big", "data", files)))
    tiny = resolve_task(str(make_task(src / "t", "tiny", "../tiny", ["part000.bin"])))
    figures = {"size": size}
    figures["none"] = time_setups(with_read_only(tiny, ["*.bin"]), where / "runs", repeats)
    figures["read_only"] = time_setups(with_read_only(big, ["*.bin"]), where / "runs", repeats)
    figures["writable"] = time_setups(with_read_only(big, []), where / "runs", repeats)
    figures["cp"] = time_copy(prepare_data(big, "lite").public, where / "copy", repeats)
    return figures


def report(figures: dict) -> None:
    gb = figures["size"] / 1e9
    none, read_only, writable, copy = (figures[k] for k in ("none", "read_only", "writable", "cp"))
    print(f"\n{gb:g} GB of data:")
    print(f"  set-up without the data:      {none[1] * 1e3:9.1f} ms (first {none[0] * 1e3:.1f} ms)")
    print(f"  set-up, the data read-only:   {read_only[1] * 1e3:9.1f} ms (first, digests recorded: "
          f"{read_only[0] * 1e3:.1f} ms), {'linked' if read_only[2] else 'copied: no sandbox here'}")
    print(f"  set-up, the data writable:    {writable[1] * 1e3:9.1f} ms (first {writable[0] * 1e3:.1f} ms)")
    print(f"  cp -r of the data:            {copy * 1e3:9.1f} ms")
    print(f"  read-only / without: {read_only[1] / none[1]:.2f}x (target <= 1.2x); "
          f"writable / cp -r: {writable[1] / copy:.2f}x (target <= 1.5x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0.1,1", help="data sizes in GB, comma-separated")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dir", default=None, help="folder on the disk to measure (default: the temp folder)")
    parser.add_argument("--quick", action="store_true", help="10 MB, one repeat: checks the benchmark runs")
    args = parser.parse_args()
    sizes = [0.01] if args.quick else [float(s) for s in args.sizes.split(",")]
    repeats = 1 if args.quick else args.repeats
    sys.path.insert(0, str(REPO))
    for size in sizes:
        where = Path(tempfile.mkdtemp(prefix="mlab-bench-setup-", dir=args.dir))
        os.environ["MLAB_CACHE"] = str(where / "cache")
        try:
            report(measure(where, int(size * 1e9), repeats))
        finally:
            shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    main()
