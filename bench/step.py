"""Benchmark of a run's per-step cost: snapshots by content hash against a full copy, and harness overhead.

A synthetic task has 100 MB of data files that are NOT read-only and a 50-line script; one run
edits the script at every step (Write File, no script execution) for 200 steps. Printed:

- snapshot bytes and time per step, against copying the whole workspace each step (what a naive
  harness does); targets: >= 1000x fewer bytes, >= 30x less time;
- the median harness overhead of a step (dispatch, snapshot, trace record) at steps 1-10 and
  190-200; target < 1 ms and flat.

Each step fsyncs the trace and the new objects, so on a disk the overhead is bounded below by
the disk's fsync latency; the benchmark runs once on a disk folder and once on a memory file
system (/dev/shm) where fsync costs nothing, and prints both.

    python bench/step.py [--steps 200] [--data-mb 100] [--disk-dir DIR] [--no-tmpfs]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FILE_MB = 10


def make_task(folder: Path, data_mb: int) -> Path:
    """A task whose data variant is a folder of random files, and a 50-line starter script."""
    data = folder / "bench" / "data"
    data.mkdir(parents=True)
    remaining = data_mb
    index = 0
    while remaining > 0:
        size = min(FILE_MB, remaining)
        (data / f"part{index:02d}.bin").write_bytes(os.urandom(size << 20))
        remaining -= size
        index += 1
    (folder / "bench" / "env").mkdir()
    (folder / "bench" / "env" / "script.py").write_text(script_text(0))
    source = folder / "bench.mlab"
    source.write_text(textwrap.dedent("""\
        use std "agents"
        task bench {
          title "Benchmark task"
          category canonical
          problem "Edit script.py."
          starter "bench/env"
          data lite { from folder "bench/data" split none public [PUBLIC] }
          metric mae on "y" lower_is_better
          baseline run "script.py"
          limits { steps 100000 time 100h }
        }
        """).replace("PUBLIC", ", ".join(f'"{p.name}"' for p in sorted(data.iterdir()))))
    return source


def script_text(version: int) -> str:
    lines = [f"value_{i} = {i} * {version}  # line {i} of the script being edited" for i in range(1, 50)]
    return "\n".join([f"# version {version}"] + lines) + "\n"


def fsync_latency(folder: Path, rounds: int = 30) -> float:
    """Median time of appending one trace-sized line and fsyncing it, in this folder."""
    probe = folder / "fsync-probe"
    fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    times = []
    try:
        for _ in range(rounds):
            os.write(fd, b"x" * 6000 + b"\n")
            started = time.perf_counter()
            os.fsync(fd)
            times.append(time.perf_counter() - started)
    finally:
        os.close(fd)
        probe.unlink()
    return statistics.median(times)


def new_object_bytes(run, record: dict, known: set[str]) -> int:
    """Bytes of the objects this step's record introduced (snapshot and undo copies), each counted once."""
    named = list(record["snapshot"]["changed"].values()) + [d for op, _, d in record["edits"] if op == "push" and d]
    fresh = {d for d in named if d not in known}
    known |= fresh
    return sum(run.store.path(d).stat().st_size for d in fresh)


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def measure(where: Path, steps: int, data_mb: int, copies: int) -> dict:
    os.environ["MLAB_CACHE"] = str(where / "cache")
    from mlab.build import resolve_task
    from mlab.run.folder import Run

    task = resolve_task(str(make_task(where / "src", data_mb)))
    run = Run.create(task, task.build.agent("research"), where / "runs")
    scan = run.snapshotter.scan
    scan_times: list[float] = []

    def timed_scan():
        started = time.perf_counter()
        delta = scan()
        scan_times.append(time.perf_counter() - started)
        return delta

    run.snapshotter.scan = timed_scan
    known = set(run.store.get_json(run.meta["initial_snapshot"]).values())
    stored: list[int] = []
    step_times: list[float] = []
    for version in range(1, steps + 1):
        started = time.perf_counter()
        observation = run.step("Write File", {"file_name": "script.py", "content": script_text(version)})
        step_times.append(time.perf_counter() - started)
        assert observation.status == "ok", observation.text
        stored.append(new_object_bytes(run, run.records[-1], known))
    workspace_bytes = folder_bytes(run.workspace.root)
    copy_times = []
    for index in range(copies):
        target = where / f"naive-copy-{index}"
        started = time.perf_counter()
        shutil.copytree(run.workspace.root, target)
        copy_times.append(time.perf_counter() - started)
        shutil.rmtree(target)
    run.close()
    return {"fsync": fsync_latency(where), "workspace_bytes": workspace_bytes, "stored": stored, "scan": scan_times, "step": step_times,
            "copy": copy_times, "trace_bytes": (run.dir / "trace.jsonl").stat().st_size}


def report(label: str, figures: dict) -> None:
    stored = statistics.median(figures["stored"])
    scan = statistics.median(figures["scan"])
    copy = statistics.median(figures["copy"])
    steps = figures["step"]
    early, late = statistics.median(steps[0:10]), statistics.median(steps[189:200] if len(steps) >= 200 else steps[-10:])
    print(f"\n== {label}")
    print(f"workspace: {figures['workspace_bytes'] / 2**20:.1f} MiB; trace after {len(steps)} steps: "
          f"{figures['trace_bytes'] / 1024:.0f} KiB")
    print(f"snapshot bytes per step: median {stored:,.0f} B (new objects: the script and its undo copy) "
          f"vs full copy {figures['workspace_bytes']:,} B -> {figures['workspace_bytes'] / max(stored, 1):,.0f}x fewer "
          "(target >= 1000x)")
    print(f"snapshot time per step: median {scan * 1e3:.3f} ms vs full copy {copy * 1e3:.1f} ms "
          f"-> {copy / scan:,.0f}x less (target >= 30x)")
    print(f"harness overhead per step (no script): median {early * 1e3:.3f} ms at steps 1-10, "
          f"{late * 1e3:.3f} ms at steps 190-200 (target < 1 ms and flat); a bare append+fsync "
          f"here takes {figures['fsync'] * 1e3:.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--data-mb", type=int, default=100)
    parser.add_argument("--copies", type=int, default=5, help="full copies timed for the naive harness")
    parser.add_argument("--disk-dir", default=None, help="folder on a disk (default: the system temp folder)")
    parser.add_argument("--no-tmpfs", action="store_true", help="skip the /dev/shm measurement")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    places = [("disk: " + (args.disk_dir or tempfile.gettempdir()), args.disk_dir)]
    if not args.no_tmpfs and Path("/dev/shm").is_dir():
        places.append(("memory file system: /dev/shm (fsync is free)", "/dev/shm"))
    for label, parent in places:
        where = Path(tempfile.mkdtemp(prefix="mlab-bench-step-", dir=parent))
        try:
            report(label, measure(where, args.steps, args.data_mb, args.copies))
        finally:
            shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    main()
