"""Benchmark of setting up a run (Run.create) as its data grows: read-only and writable data.

A synthetic task has a folder of random data files of the given size (files of 64 MB at most);
it is set up three ways, each after one untimed set-up that prepares the data and records its
digests (that first set-up's time is printed too), and the ways alternate within each repeat
(with a `cp -r`), so that the ratios compare set-ups made under the same load:

- without the data (a task whose only data file is 1 KB): the set-up every run pays;
- with the data read-only (the task's `read_only` covers it): target at most 1.2x the set-up
  without it, whatever its size (each file is a hard link to the prepared cache, never read);
- with the data writable: target at most 1.5x a plain `cp -r` of the data folder (MLAgentBench's
  set-up), since each file is copied once and not hashed.

Read-only data is linked only where scripts run in bubblewrap (else it is copied): the script
says which. Each time is the median of --repeats set-ups, run folders removed between them; each
ratio the median of the repeats' ratios. `--file-mb 1` makes many small files, to see what a file
costs. `--only read-only` runs the first two ways alone: the writable way and `cp -r` write
the data twice a repeat, and the disk's flushing of those writes then falls on the small set-ups
beside them.

    python bench/setup.py [--sizes 0.1,1] [--repeats 5] [--file-mb 64] [--only read-only|writable]
                          [--dir DIR] [--quick]
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

    return TaskBuild.of(task.name, dict(task.document, read_only=patterns), task.build)


def set_up_once(task, runs: Path) -> tuple[float, float, bool]:
    """One set-up: (wall seconds, CPU seconds, whether the first data file was linked)."""
    from mlab.run.folder import Run

    started, cpu = time.perf_counter(), time.process_time()
    run = Run.create(task, task.build.agent("research"), runs)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    data = sorted(run.workspace.root.glob("part*.bin"))
    linked = bool(data) and os.stat(data[0]).st_nlink > 1
    run.close()
    shutil.rmtree(run.dir)
    return wall, cpu, linked


def copy_once(source: Path, target: Path) -> float:
    started = time.perf_counter()
    subprocess.run(["cp", "-r", str(source), str(target)], check=True)
    wall = time.perf_counter() - started
    shutil.rmtree(target)
    return wall


WAYS = ("none", "read_only", "writable", "cp")


def measure(where: Path, size: int, repeats: int, ways: tuple[str, ...] = WAYS) -> dict:
    """Each repeat sets up the three ways and copies the data once, in a rotating order, so that a
    spell of load on the shared machine falls on all four: the ratios are taken within a repeat.
    `ways`: those to run (the read-only ratio alone, say, without the writes of the other two)."""
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
    runs = where / "runs"
    tasks = {"none": with_read_only(tiny, ["*.bin"]), "read_only": with_read_only(big, ["*.bin"]),
             "writable": with_read_only(big, [])}
    figures = {"size": size, "files": len(files), "first": {}, "linked": False}
    for name, task in tasks.items():   # prepares the data and records its digests
        if name in ways:
            figures["first"][name] = set_up_once(task, runs)[0]
    public = prepare_data(big, "lite").public
    ways = [name for name in WAYS if name in ways]
    samples = {name: [] for name in ways}
    for index in range(repeats):
        turn = index % len(ways)
        for name in ways[turn:] + ways[:turn]:
            if name == "cp":
                samples["cp"].append((copy_once(public, where / "copy"), 0.0))
            else:
                wall, cpu, linked = set_up_once(tasks[name], runs)
                samples[name].append((wall, cpu))
                figures["linked"] |= linked and name == "read_only"
    figures["samples"] = samples
    return figures


def quartiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) < 2:
        return values[0], values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], statistics.median(values), q[2]


def report(figures: dict) -> None:
    gb, files = figures["size"] / 1e9, figures["files"]
    samples, first = figures["samples"], figures["first"]
    wall = {name: [w for w, _ in values] for name, values in samples.items()}
    cpu = {name: [c for _, c in values] for name, values in samples.items()}
    median = {name: statistics.median(values) for name, values in wall.items()}
    repeats = len(next(iter(wall.values())))
    print(f"\n{gb:g} GB of data in {files} files ({repeats} repeats, ratios within a repeat):")
    if "none" in wall:
        print(f"  set-up without the data:      {median['none'] * 1e3:9.1f} ms (first {first['none'] * 1e3:.1f} ms)")
        print(f"  set-up, the data read-only:   {median['read_only'] * 1e3:9.1f} ms (first, digests recorded: "
              f"{first['read_only'] * 1e3:.1f} ms), {'linked' if figures['linked'] else 'copied: no sandbox here'}")
    if "cp" in wall:
        print(f"  set-up, the data writable:    {median['writable'] * 1e3:9.1f} ms (first {first['writable'] * 1e3:.1f} ms)")
        print(f"  cp -r of the data:            {median['cp'] * 1e3:9.1f} ms")
    if "none" in wall:
        read_only = [r / n for r, n in zip(wall["read_only"], wall["none"])]
        read_only_cpu = [r / n for r, n in zip(cpu["read_only"], cpu["none"])]
        extra = [(r - n) / files for r, n in zip(wall["read_only"], wall["none"])]
        low, mid, high = quartiles(read_only)
        print(f"  read-only / without: {mid:.2f}x (quartiles {low:.2f} to {high:.2f}; target <= 1.2x); "
              f"CPU {statistics.median(read_only_cpu):.2f}x; {statistics.median(extra) * 1e3:.3f} ms more a file")
    if "cp" in wall:
        low, mid, high = quartiles([w / c for w, c in zip(wall["writable"], wall["cp"])])
        print(f"  writable / cp -r: {mid:.2f}x (quartiles {low:.2f} to {high:.2f}; target <= 1.5x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0.1,1", help="data sizes in GB, comma-separated")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dir", default=None, help="folder on the disk to measure (default: the temp folder)")
    parser.add_argument("--file-mb", type=float, default=64, help="size of each data file (smaller: more files)")
    parser.add_argument("--only", choices=("read-only", "writable"), default=None,
                        help="one target's two ways alone (read-only: without the other's 2 copies a repeat)")
    parser.add_argument("--quick", action="store_true", help="10 MB, one repeat: checks the benchmark runs")
    args = parser.parse_args()
    sizes = [0.01] if args.quick else [float(s) for s in args.sizes.split(",")]
    repeats = 1 if args.quick else args.repeats
    sys.path.insert(0, str(REPO))
    global FILE_BYTES
    FILE_BYTES = int(args.file_mb * (1 << 20))
    for size in sizes:
        where = Path(tempfile.mkdtemp(prefix="mlab-bench-setup-", dir=args.dir))
        os.environ["MLAB_CACHE"] = str(where / "cache")
        try:
            ways = {"read-only": ("none", "read_only"), "writable": ("writable", "cp")}.get(args.only, WAYS)
            report(measure(where, int(size * 1e9), repeats, ways))
        finally:
            shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    main()
