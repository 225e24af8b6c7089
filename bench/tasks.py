"""Benchmark of the task suite's size and speed targets: bundled data and lite starters on one core.

Printed:

- the bytes that ship with the tasks (every file under tasks/ but compiled caches: the bundled
  data, and the starters and generators with it), against the 20 MB target of bundled data;
- for each task, the wall time of its lite starter in the sandbox with this process pinned to
  one CPU (the sandbox inherits it), against the 10 s target: a fresh preparation's starter run
  as `mlab baseline` runs it (a timed task's starter is timed against itself, and its median
  is shown). Tasks whose starter is deliberately incomplete have nothing to time.

    python bench/tasks.py [--tasks house-price,imdb] [--cores 1] [--quick]
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA_LIMIT = 20 * 10**6
STARTER_LIMIT_S = 10.0


def bundled_bytes(tasks: Path) -> tuple[int, list[tuple[int, str]]]:
    """Total bytes of the files under tasks/, and the three largest (size, path)."""
    files = [p for p in tasks.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    sizes = sorted(((p.stat().st_size, p.relative_to(tasks).as_posix()) for p in files), reverse=True)
    return sum(size for size, _ in sizes), sizes[:3]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", help="comma-separated task names (default: all)")
    parser.add_argument("--cores", type=int, default=1, help="CPUs to pin to (default 1)")
    parser.add_argument("--quick", action="store_true", help="house-price only: checks the benchmark runs")
    args = parser.parse_args()
    if args.quick:
        args.tasks = "house-price"

    from mlab.scoring.baseline import measure_starter
    from mlab.build import resolve_task

    total, largest = bundled_bytes(REPO / "tasks")
    print(f"tasks/ ships {total / 1e6:.2f} MB, data and code, of {DATA_LIMIT / 1e6:.0f} MB allowed for bundled data "
          f"(ratio {total / DATA_LIMIT:.3f}); largest: " + ", ".join(f"{path} {size / 1e3:.0f} kB" for size, path in largest))

    cpus = sorted(os.sched_getaffinity(0))[:max(1, args.cores)]
    os.sched_setaffinity(0, cpus)
    names = args.tasks.split(",") if args.tasks else sorted(
        p.stem for p in (REPO / "tasks").glob("*.mlab") if p.stem != "experiments")
    print(f"lite starters pinned to CPU {','.join(map(str, cpus))}; target under {STARTER_LIMIT_S:.0f} s each")
    print(f"{'task':20} {'starter wall s':>15} {'ratio to target':>16}  note")
    worst = 0.0
    for name in names:
        task = resolve_task(name, None)
        started = time.perf_counter()
        measured = measure_starter(task, "lite")
        if not measured.get("measured"):
            print(f"{name:20} {'-':>15} {'-':>16}  declared baseline: {measured.get('reason', '')[:40]}")
            continue
        timed = task.view.metric.kind == "timed"
        wall = float(measured["value"] if timed else measured["wall_s"])
        worst = max(worst, wall / STARTER_LIMIT_S)
        note = (f"median of {measured.get('runs')} timed runs" if timed else "") + (
            f"; failed: {measured['failure']}" if measured.get("failure") else "")
        print(f"{name:20} {wall:>15.2f} {wall / STARTER_LIMIT_S:>16.2f}  {note} "
              f"(whole measurement {time.perf_counter() - started:.0f} s)")
    print(f"worst ratio to the {STARTER_LIMIT_S:.0f} s target: {worst:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
