"""`mlab baseline`: run a task's starter in the sandbox and report (or record) its score (mlab.scoring.baseline)."""
from __future__ import annotations

from pathlib import Path

from mlab.cli import args as shared
from mlab.errors import EXIT_FAILED, EXIT_OK


def add_arguments(parser) -> None:
    shared.add_task(parser)
    shared.add_data(parser)
    shared.add_build(parser)
    parser.add_argument("--record", action="store_true",
                        help="write the score with its provenance into the task's baselines.json")
    shared.add_python(parser, help="interpreter for the starter (default: this one)")


def _direction(task) -> str:
    return task.view.metric.direction.replace("_", " ")


def main(args) -> int:
    from mlab.scoring.baseline import is_current, measure_starter, record_baseline, recorded_entry
    from mlab.build import resolve_task

    task = resolve_task(args.task, Path(args.build) if args.build else None)
    metric = task.view.metric
    label = f"{task.name} ({args.data})"
    measured = measure_starter(task, args.data, python=args.python)
    if measured["kind"] == "value":
        print(f"{label}: declared baseline {metric.name} {measured['value']:g} because {measured['reason']!r}; "
              "the starter is deliberately incomplete, so nothing is run or recorded")
        return EXIT_OK
    if measured.get("value") is None:
        print(f"{label}: the starter {measured.get('script')} gave no score: {measured.get('failure')}")
        return EXIT_FAILED
    if metric.timed:
        print(f"{label}: timed metric: the starter {measured['script']} runs in {measured['value']:.3f} s "
              f"(median of {measured.get('runs')} runs, side by side with itself); no number is recorded: "
              "the starter is timed beside each submission")
        paired = measured.get("paired_speedups") or []
        if paired:
            print(f"  timing noise here: the starter ran {min(paired):.3f}x to {max(paired):.3f}x as fast as itself "
                  f"across the rounds")
        return EXIT_OK
    print(f"{label}: the starter {measured['script']} scored {metric.name} {measured['value']:.6g} "
          f"({_direction(task)}) in {measured.get('wall_s', 0):.1f} s")
    entry = recorded_entry(task, args.data)
    if entry is not None:
        same = "matches" if is_current(task, args.data, entry) else "differs (stale record)"
        print(f"  recorded: {entry['value']:.6g} (mlab {entry.get('mlab_version')}, {entry.get('recorded')}; "
              f"code hash {same})")
    if args.record:
        path = record_baseline(task, args.data, measured)
        print(f"  recorded in {path}")
    return EXIT_OK
