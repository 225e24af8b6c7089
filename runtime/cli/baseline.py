"""The `mlab baseline` and `mlab audit` commands (the work is in mlab.scoring.baseline and mlab.audit)."""
from __future__ import annotations

from pathlib import Path

from mlab.errors import EXIT_FAILED, EXIT_OK


def add_parsers(verbs) -> None:
    baseline = verbs.add_parser("baseline", help="run a task's starter in the sandbox and report (or record) its score")
    baseline.add_argument("task", metavar="TASK", help="task name, .mlab file, or build folder")
    baseline.add_argument("--data", default="lite", choices=("lite", "full"), help="data variant (default lite)")
    baseline.add_argument("--build", metavar="DIR", help="take the task from this build (refused if stale)")
    baseline.add_argument("--record", action="store_true",
                          help="write the score with its provenance into the task's baselines.json")
    baseline.add_argument("--python", metavar="P", help="interpreter for the starter (default: this one)")

    audit = verbs.add_parser("audit", help="check a task: no answer leaks, sandbox confinement, baseline, prompt")
    audit.add_argument("task", metavar="TASK", help="task name, .mlab file, or build folder")
    audit.add_argument("--data", default="lite", choices=("lite", "full"), help="data variant (default lite)")
    audit.add_argument("--build", metavar="DIR", help="take the task from this build (refused if stale)")
    audit.add_argument("--python", metavar="P", help="interpreter for scripts (default: this one)")


def _direction(task) -> str:
    return task.doc["metric"]["direction"].replace("_", " ")


def cmd_baseline(args) -> int:
    from mlab.scoring.baseline import code_hash, measure_starter, record_baseline, recorded_entry
    from mlab.build import resolve_task

    task = resolve_task(args.task, Path(args.build) if args.build else None)
    metric = task.doc["metric"]
    label = f"{task.name} ({args.data})"
    measured = measure_starter(task, args.data, python=args.python)
    if measured["kind"] == "value":
        print(f"{label}: declared baseline {metric['name']} {measured['value']:g} because {measured['reason']!r}; "
              "the starter is deliberately incomplete, so nothing is run or recorded")
        return EXIT_OK
    if measured.get("value") is None:
        print(f"{label}: the starter {measured.get('script')} gave no score: {measured.get('failure')}")
        return EXIT_FAILED
    if metric["kind"] == "timed":
        print(f"{label}: timed metric: the starter {measured['script']} runs in {measured['value']:.3f} s "
              f"(median of {measured.get('runs')} runs, side by side with itself); no number is recorded: "
              "the starter is timed beside each submission")
        paired = measured.get("paired_speedups") or []
        if paired:
            print(f"  timing noise here: the starter ran {min(paired):.3f}x to {max(paired):.3f}x as fast as itself "
                  f"across the rounds")
        return EXIT_OK
    print(f"{label}: the starter {measured['script']} scored {metric['name']} {measured['value']:.6g} "
          f"({_direction(task)}) in {measured.get('wall_s', 0):.1f} s")
    entry = recorded_entry(task, args.data)
    if entry is not None:
        same = "matches" if entry.get("code_hash") == code_hash(task, args.data) else "differs (stale record)"
        print(f"  recorded: {entry['value']:.6g} (mlab {entry.get('mlab_version')}, {entry.get('recorded')}; "
              f"code hash {same})")
    if args.record:
        path = record_baseline(task, args.data, measured)
        print(f"  recorded in {path}")
    return EXIT_OK


def cmd_audit(args) -> int:
    from mlab.audit.checks import audit_task
    from mlab.build import resolve_task

    task = resolve_task(args.task, Path(args.build) if args.build else None)
    report = audit_task(task, args.data, python=args.python)
    for name in report.passed:
        print(f"ok    {name}")
    for note in report.notes:
        print(f"note  {note}")
    for finding in report.findings:
        print(f"FAIL  {finding}")
    verdict = "passes" if report.ok else f"fails ({len(report.findings)} finding{'s' if len(report.findings) != 1 else ''})"
    print(f"audit of {task.name} ({args.data}) {verdict}")
    return EXIT_OK if report.ok else EXIT_FAILED
