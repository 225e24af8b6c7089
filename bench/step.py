"""Benchmark of a run's per-step cost: snapshots by content hash against a full copy, and harness overhead.

A synthetic task has 100 MB of data files that are NOT read-only and a 50-line script; one run
edits the script at every step (Write File, no script execution) for 200 steps. Printed:

- snapshot bytes and time per step, against copying the whole workspace each step (what a naive
  harness does); targets: >= 1000x fewer bytes, >= 30x less time;
- the median harness overhead of a step (dispatch, snapshot, trace record) at steps 1-10 and
  190-200; target < 1 ms and flat;
- the CPU time per step over all the steps (this process's CPU time, which the machine's other
  load disturbs far less than wall time); target <= 1.0 ms;
- the median wall time per step on the disk against on a memory file system (/dev/shm): what the
  disk adds to a step; target under 1 ms (what a user could notice). Each record is one write()
  of the trace, which survives a kill -9 of the harness as soon as it returns; the fsync against
  a crash of the machine runs at most once a second (mlab.trace.SYNC_INTERVAL_S), and each new
  object is a file made and renamed into place;
- resuming the run from its folder (--resume-steps steps, default 10,000, made by the same
  edit), CPU and wall time, and the bytes it hashed against the workspace's size; targets
  <= 1 s and each workspace file hashed at most once (hashed bytes <= 1.0x the workspace).

    python bench/step.py [--steps 200] [--data-mb 100] [--resume-steps 10000] [--disk-dir DIR]
                         [--no-tmpfs] [--quick]
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
WARM_STEPS = 5


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
    cpu = 0.0
    for version in range(1, steps + 1):
        started, cpu_started = time.perf_counter(), time.process_time()
        observation = run.step("Write File", {"file_name": "script.py", "content": script_text(version)})
        step_times.append(time.perf_counter() - started)
        if version > WARM_STEPS:  # the first steps import and fill caches
            cpu += time.process_time() - cpu_started
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
            "copy": copy_times, "trace_bytes": (run.dir / "trace.jsonl").stat().st_size, "cpu": cpu / max(steps - WARM_STEPS, 1),
            "run_dir": run.dir}


class _CountingHash:
    """hashlib.sha256 that adds the bytes it is given to a counter."""

    counted = [0]

    def __init__(self, data: bytes = b""):
        import hashlib

        self._hash = hashlib.sha256()
        self.update(data)

    def update(self, data) -> None:
        self.counted[0] += len(data)
        self._hash.update(data)

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


def measure_resume(run_dir: Path, steps: int) -> dict:
    """Extend the run to `steps` steps, close it, and time Run.resume with the bytes it hashes."""
    import mlab.run.folder as folder
    import mlab.snapshots as snapshots
    from mlab.run.folder import Run

    run = Run.resume(run_dir)
    for version in range(run.steps_taken + 1, steps + 1):
        run.step("Write File", {"file_name": "script.py", "content": script_text(version)})
    workspace = folder_bytes(run.workspace.root)
    run.close()
    real, restore = snapshots.hashlib, snapshots.Snapshotter.restore
    in_workspace = [0]

    def counted_restore(self, manifest):  # the bytes hashed while the workspace is restored
        before = _CountingHash.counted[0]
        restore(self, manifest)
        in_workspace[0] += _CountingHash.counted[0] - before

    snapshots.hashlib = type("counting_hashlib", (), {"sha256": _CountingHash})
    snapshots.Snapshotter.restore = counted_restore
    _CountingHash.counted[0] = 0
    try:
        started, cpu_started = time.perf_counter(), time.process_time()
        resumed = Run.resume(run_dir)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    finally:
        snapshots.hashlib, snapshots.Snapshotter.restore = real, restore
    assert resumed.steps_taken == steps
    resumed.close()
    del folder
    return {"steps": steps, "wall": wall, "cpu": cpu, "hashed": in_workspace[0],
            "objects": _CountingHash.counted[0] - in_workspace[0], "workspace": workspace}


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
    print(f"CPU per step over steps {WARM_STEPS + 1}-{len(steps)}: {figures['cpu'] * 1e3:.3f} ms (target <= 1.0 ms)")
    resume = figures.get("resume")
    if resume:
        print(f"resume of a {resume['steps']:,}-step run: {resume['wall']:.2f} s wall, {resume['cpu']:.2f} s CPU "
              f"(target <= 1 s); hashed {resume['hashed'] / 2**20:.1f} MiB of workspace files for a "
              f"{resume['workspace'] / 2**20:.1f} MiB workspace ({resume['hashed'] / max(resume['workspace'], 1):.2f}x, "
              f"target <= 1.0x), and {resume['objects'] / 2**20:.1f} MiB of the objects the records name (checked "
              "once each for what a machine crash may have lost)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--data-mb", type=int, default=100)
    parser.add_argument("--copies", type=int, default=5, help="full copies timed for the naive harness")
    parser.add_argument("--resume-steps", type=int, default=10000, help="steps of the resumed run (0: no resume)")
    parser.add_argument("--disk-dir", default=None, help="folder on a disk (default: the system temp folder)")
    parser.add_argument("--no-tmpfs", action="store_true", help="skip the /dev/shm measurement")
    parser.add_argument("--quick", action="store_true", help="20 steps, 2 MB, a 40-step resume: checks the benchmark runs")
    args = parser.parse_args()
    if args.quick:
        args.steps, args.data_mb, args.copies, args.resume_steps = 20, 2, 1, 40
    sys.path.insert(0, str(REPO))
    places = [("disk: " + (args.disk_dir or tempfile.gettempdir()), args.disk_dir)]
    if not args.no_tmpfs and Path("/dev/shm").is_dir():
        places.append(("memory file system: /dev/shm (fsync is free)", "/dev/shm"))
    walls = {}
    for index, (label, parent) in enumerate(places):
        where = Path(tempfile.mkdtemp(prefix="mlab-bench-step-", dir=parent))
        try:
            figures = measure(where, args.steps, args.data_mb, args.copies)
            if index == 0 and args.resume_steps:
                figures["resume"] = measure_resume(figures["run_dir"], max(args.resume_steps, args.steps))
            report(label, figures)
            walls[parent] = statistics.median(figures["step"])
        finally:
            shutil.rmtree(where, ignore_errors=True)
    if len(walls) == 2:
        disk, memory = walls[args.disk_dir], walls["/dev/shm"]
        print(f"\nmedian wall time per step, disk / memory file system: {disk * 1e3:.3f} / {memory * 1e3:.3f} ms "
              f"= {disk / memory:.2f}x: the disk adds {(disk - memory) * 1e3:.3f} ms a step (target under 1 ms)")


if __name__ == "__main__":
    main()
