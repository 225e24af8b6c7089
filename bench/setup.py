"""Benchmark of setting up a run (Run.create) as its data grows: read-only and writable data.

A synthetic task has random data files of the given size, by default made by a generator when the
data is prepared and split into 7 files, as every shipped full variant's data is (downloaded or
generated, 1 to 7 public files); it is set up three ways, each after one untimed set-up that
prepares the data and records its digests (that first set-up's time is printed too), and the
ways alternate within each repeat (with a `cp -r`), so that the ratios compare set-ups made
under the same load:

- without the data (a task whose only data file is 1 KB): the set-up every run pays;
- with the data read-only (the task's `read_only` covers it): target at most 1.2x the set-up
  without it, whatever its size (each file is a hard link to the prepared cache, never read);
- with the data writable: target at most 1.5x a plain `cp -r` of the data folder (MLAgentBench's
  set-up), since each file is copied once and not hashed.

Read-only data is linked only where scripts run in bubblewrap (else it is copied): the script
says which. Each time is the median of --repeats set-ups, run folders removed between them; each
ratio the median of the repeats' ratios, printed with what each data file added. A read-only file
costs a set-up a few metadata operations whatever its size: `--file-mb 1` (files of 1 MB at most
instead of --files of equal size) makes many small files, to see what a file costs.
`--source folder` keeps the data as a folder beside the task, whose files the preparation key
stats at each set-up (`--source folder --file-mb 64` were the defaults of the earlier passes
recorded in docs/benchmarks.md). `--only read-only` runs the first two ways alone: the writable way and `cp -r`
write the data twice a repeat, and the disk's flushing of those writes then falls on the small
set-ups beside them.

    python bench/setup.py [--sizes 0.1,1] [--repeats 5] [--files 7 | --file-mb MB]
                          [--source generate|folder] [--only read-only|writable] [--dir DIR] [--quick]
"""
from __future__ import annotations

import argparse
import inspect
import json
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


def write_random_files(folder, size, file_bytes):
    """Random files of `file_bytes` at most adding up to `size` bytes in `folder`; their names.
    (Also the body of the generator's module: it uses `os` alone.)"""
    names, index = [], 0
    while size > 0:
        part = min(file_bytes, size)
        names.append(f"part{index:03d}.bin")
        with open(os.path.join(folder, names[-1]), "wb") as handle:
            for _ in range(0, part, 1 << 20):
                handle.write(os.urandom(min(1 << 20, part)))
            handle.truncate(part)
        size -= part
        index += 1
    return names


def make_data(folder: Path, size: int, file_bytes: int) -> list[str]:
    """A new folder of random files adding up to `size` bytes; their names."""
    folder.mkdir(parents=True)
    return write_random_files(folder, size, file_bytes)


# The generator of the `generate` shape: the same files, written when the data is prepared (it is
# imported from the task's folder, where this module cannot be imported).
GENERATOR = "import json, os, pathlib\n\n\n" + inspect.getsource(write_random_files) + """

def make(public, private, seed):
    spec = json.loads((pathlib.Path(__file__).parent / "spec.json").read_text())
    write_random_files(public, spec["size"], spec["file_bytes"])
"""


def file_names(size: int, file_bytes: int) -> list[str]:
    """The names make_data and the generator give the files of `size` bytes."""
    return [f"part{index:03d}.bin" for index in range(-(-size // file_bytes))]


def make_generator(folder: Path, size: int, file_bytes: int) -> str:
    """A generator (a `generate` source) writing random files adding up to `size` bytes when the
    data is prepared, as every full variant's data is made (downloaded or generated): the set-up
    then walks no source folder of the data. Its `from` text."""
    folder.mkdir(parents=True)
    (folder / "make_data.py").write_text(GENERATOR)
    (folder / "spec.json").write_text(json.dumps({"size": size, "file_bytes": file_bytes}))
    return f"{folder.name}/make_data.py:make"


def make_task(folder: Path, name: str, data: str, files: list[str], kind: str = "folder") -> Path:
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
          data lite { from KIND "DATA" split none public [PUBLIC] }
          metric mae on "y" lower_is_better
          baseline run "train.py"
        }
        """).replace("NAME", name).replace("KIND", kind).replace("DATA", data)
        .replace("PUBLIC", ", ".join(f'"{f}"' for f in files)))
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


def new_file_cost(folder: Path, count: int = 21) -> float:
    """Median seconds to make an empty file in a new folder under `folder`. A set-up makes about 40
    files and folders (the run folder's own, the starter's, its store's, the build's copy) and
    `cp -r` one a file, so what a new one costs the disk at the moment moves the set-up's fixed
    cost, and with it the ratios at small sizes (on the development machine's shared disk, from
    about 20 us to 0.8 ms from one hour, or one folder, to the next)."""
    probe = Path(tempfile.mkdtemp(prefix="probe-", dir=folder))
    times = []
    try:
        for index in range(count):
            started = time.perf_counter()
            os.close(os.open(probe / f"f{index}", os.O_WRONLY | os.O_CREAT | os.O_EXCL))
            times.append(time.perf_counter() - started)
    finally:
        shutil.rmtree(probe)
    return statistics.median(times)


def measure(where: Path, size: int, file_bytes: int, repeats: int, ways: tuple[str, ...] = WAYS,
            source: str = "generate") -> dict:
    """Each repeat sets up the three ways and copies the data once, in a rotating order, so that a
    spell of load on the shared machine falls on all four: the ratios are taken within a repeat.
    `ways`: those to run (the read-only ratio alone, say, without the writes of the other two);
    `source`: the data a folder beside the task (its key walks it) or made by a generator."""
    from mlab.build import resolve_task
    from mlab.data.prepare import prepare_data

    from mlab.cache import SETTLED_S

    src = where / "src"
    if source == "generate":
        files = file_names(size, file_bytes)
        big = make_task(src, "big", make_generator(src / "gen", size, file_bytes), files, "generate")
        tiny = make_task(src / "t", "tiny", make_generator(src / "t" / "gen", 1024, 1024), ["part000.bin"], "generate")
    else:
        files = make_data(src / "data", size, file_bytes)
        (src / "tiny").mkdir()
        (src / "tiny" / "part000.bin").write_bytes(os.urandom(1024))
        big = make_task(src, "big", "data", files)
        tiny = make_task(src / "t", "tiny", "../tiny", ["part000.bin"])
    time.sleep(SETTLED_S)   # a source file's digest is remembered once it has settled (mlab.cache)
    big, tiny = resolve_task(str(big)), resolve_task(str(tiny))
    runs = where / "runs"
    tasks = {"none": with_read_only(tiny, ["*.bin"]), "read_only": with_read_only(big, ["*.bin"]),
             "writable": with_read_only(big, [])}
    figures = {"size": size, "files": len(files), "first": {}, "linked": False, "source": source}
    for name, task in tasks.items():   # prepares the data and records its digests
        if name in ways:
            figures["first"][name] = set_up_once(task, runs)[0]
    public = prepare_data(big, "lite").public
    figures["new_file"] = [new_file_cost(where)]
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
    figures["new_file"].append(new_file_cost(where))
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
    made = "made by a generator" if figures["source"] == "generate" else "a folder beside the task"
    print(f"\n{gb:g} GB of data in {files} files, {made} ({repeats} repeats, ratios within a repeat):")
    before, after = figures["new_file"]
    print(f"  a new file in this folder:    {before * 1e6:9.0f} us before the repeats, {after * 1e6:.0f} us after "
          f"(a set-up makes about 40)")
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
    parser.add_argument("--files", type=int, default=7,
                        help="the data in this many files of equal size (7: the most public files of a shipped full variant)")
    parser.add_argument("--file-mb", type=float, default=None,
                        help="instead of --files: files of this size at most (smaller: more files, to see what a file costs)")
    parser.add_argument("--only", choices=("read-only", "writable"), default=None,
                        help="one target's two ways alone (read-only: without the other's 2 copies a repeat)")
    parser.add_argument("--source", choices=("generate", "folder"), default="generate",
                        help="the data a folder beside the task (its key walks it at each set-up) or made by a "
                             "generator when prepared, as every full variant's is (downloaded or generated)")
    parser.add_argument("--quick", action="store_true", help="10 MB, one repeat: checks the benchmark runs")
    args = parser.parse_args()
    sizes = [0.01] if args.quick else [float(s) for s in args.sizes.split(",")]
    repeats = 1 if args.quick else args.repeats
    sys.path.insert(0, str(REPO))
    for size in sizes:
        data_bytes = int(size * 1e9)
        file_bytes = int(args.file_mb * (1 << 20)) if args.file_mb else -(-data_bytes // max(1, args.files))
        where = Path(tempfile.mkdtemp(prefix="mlab-bench-setup-", dir=args.dir))
        os.environ["MLAB_CACHE"] = str(where / "cache")
        try:
            ways = {"read-only": ("none", "read_only"), "writable": ("writable", "cp")}.get(args.only, WAYS)
            report(measure(where, data_bytes, file_bytes, repeats, ways, args.source))
        finally:
            shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    main()
