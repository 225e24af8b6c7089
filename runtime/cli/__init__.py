"""`mlab`: prepare data, drive runs with scripted actions, check out a step's workspace.

Exit codes: 0 ok, 1 the run failed or an error a user can fix (bad build, bad data, ...),
2 usage, 3 I/O (a file that cannot be read or written).
Heavy libraries (pandas, scikit-learn, litellm) are imported only by the commands that need them.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mlab.errors import EXIT_INTERRUPTED, EXIT_IO, EXIT_OK, MlabError, UsageError


__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mlab", description="The mlab runtime: runs compiled mlab tasks and agents.",
        epilog="exit codes: 0 ok, 1 run failed or error, 2 usage, 3 I/O")
    parser.add_argument("--version", action="store_true", help="print the runtime version")
    verbs = parser.add_subparsers(dest="verb", metavar="COMMAND")

    prepare = verbs.add_parser("prepare", help="prepare a task's data into the cache and say where")
    prepare.add_argument("task", metavar="TASK", help="task name, .mlab file, or build folder")
    prepare.add_argument("--data", default="lite", choices=("lite", "full"), help="data variant (default lite)")
    prepare.add_argument("--build", metavar="DIR", help="take the task from this build (refused if stale)")
    prepare.add_argument("--checksums", action="store_true",
                         help="also print a `checksum` declaration for every downloaded (or prepared) file, "
                              "to record in the task")

    drive = verbs.add_parser("drive", help="run a JSON list of actions through a run (scripted driver)")
    drive.add_argument("task", nargs="?", metavar="TASK", help="task name, .mlab file, or build folder")
    drive.add_argument("--actions", required=True, metavar="FILE.json",
                       help='JSON list of {"action": NAME, "input": {...}}')
    drive.add_argument("--agent", metavar="A", help="agent whose action table is used (default: the task's)")
    drive.add_argument("--data", default="lite", choices=("lite", "full"), help="data variant (default lite)")
    drive.add_argument("--runs-dir", default="runs", metavar="DIR", help="where run folders go (default runs/)")
    drive.add_argument("--resume", metavar="RUN_DIR", help="continue this run from its last complete step")
    drive.add_argument("--steps", type=int, metavar="N", help="step limit (overrides the task's)")
    drive.add_argument("--time", metavar="T", help="time limit, e.g. 90s, 30m, 5h (overrides the task's)")
    drive.add_argument("--build", metavar="DIR", help="take the task from this build (refused if stale)")
    drive.add_argument("--python", metavar="P", help="interpreter for scripts (default: this one)")
    drive.add_argument("--device", metavar="D", help="CUDA_VISIBLE_DEVICES for scripts")
    drive.add_argument("--seed", type=int, default=0, help="the run's seed (default 0)")
    drive.add_argument("--quiet", action="store_true", help="print only the summary, not each observation")

    from mlab.cli.run import add_parsers

    add_parsers(verbs)

    from mlab.cli.eval import add_parsers as add_report_parsers

    add_report_parsers(verbs)

    from mlab.cli.sweep import add_parsers as add_sweep_parsers

    add_sweep_parsers(verbs)

    from mlab.cli.baseline import add_parsers as add_baseline_parsers

    add_baseline_parsers(verbs)

    checkout = verbs.add_parser("checkout", help="restore the workspace of a step of a run into a folder")
    checkout.add_argument("run", metavar="RUN", help="run folder (runs/<run-id>)")
    checkout.add_argument("--step", type=int, required=True, metavar="N", help="step (0: as prepared)")
    checkout.add_argument("dir", metavar="DIR", help="empty or new folder to write the files into")
    return parser


def cmd_prepare(args) -> int:
    from mlab.build import resolve_task
    from mlab.data.prepare import prepare_data

    task = resolve_task(args.task, Path(args.build) if args.build else None)
    prepared = prepare_data(task, args.data)
    state = "already prepared" if prepared.reused else "prepared"
    print(f"{task.name} ({args.data}) {state} in {prepared.folder}")
    for side in ("public", "private"):
        files = sorted(p.relative_to(prepared.folder / side).as_posix()
                       for p in (prepared.folder / side).rglob("*") if p.is_file())
        print(f"  {side}: {', '.join(files) or '(none)'}")
    from mlab.data.prepare import checksum_lines
    from mlab.data.loaders.remote import REMOTE_SOURCES

    variant = task.variant(args.data)
    if args.checksums:
        lines, what = checksum_lines(task, args.data, prepared)
        print(f"# SHA-256 of {what}; to record them, paste into the `data {args.data} {{ ... }}` block of "
              f"task {task.name} (in {task.root}):")
        print("\n".join(lines))
    elif variant["checksums"]:
        print(f"  checksums: {len(variant['checksums'])} declared, all verified")
    elif variant["source"]["kind"] in REMOTE_SOURCES:
        print(f"  checksums: none declared; `mlab prepare {task.name} --data {args.data} --checksums` prints "
              f"them for the task")
    return EXIT_OK


def _print_step(record: dict, observation) -> None:
    name = record["resolved"]["action"] if record["resolved"] else record["action"]
    print(f"--- step {record['step']}: {name} [{record['status']}]")
    print(observation.text)


def cmd_drive(args) -> int:
    from mlab.build import resolve_task
    from mlab.limits import limit_overrides
    from mlab.run.drive import drive, load_actions
    from mlab.run.folder import Run

    actions = load_actions(Path(args.actions))
    if args.resume:
        if args.task or args.build or args.agent:
            raise UsageError("--resume continues a run as it was created; do not give TASK, --build or --agent")
        run = Run.resume(Path(args.resume))
        print(f"resuming run {run.id} after step {run.steps_taken}")
    else:
        if not args.task:
            raise UsageError("name a TASK (or --resume RUN_DIR)")
        task = resolve_task(args.task, Path(args.build) if args.build else None)
        agent = task.build.agent(args.agent or task.doc["agent"])
        run = Run.create(task, agent, Path(args.runs_dir), data=args.data, seed=args.seed,
                         limits=limit_overrides(args), python=args.python, device=args.device)
        print(f"run {run.id} in {run.dir}")
    try:
        drive(run, actions, on_step=None if args.quiet else _print_step)
    finally:
        run.close()
    if run.ended:
        print(f"run {run.id} ended after {run.steps_taken} steps ({run.end_reason})")
    else:
        print(f"run {run.id}: {run.steps_taken} steps taken, not ended (the actions ran out); continue with "
              f"`mlab drive --resume {run.dir} --actions FILE`")
    return EXIT_OK


def cmd_checkout(args) -> int:
    from mlab.run.checkout import checkout

    manifest = checkout(Path(args.run), args.step, Path(args.dir))
    print(f"checked out step {args.step} of {args.run} into {args.dir} ({len(manifest)} files)")
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    from mlabc.api import parse_command

    from mlab import __version__

    args = parse_command(_parser(), argv, "mlab", __version__)
    if isinstance(args, int):
        return args
    from mlab.cli.run import cmd_list, cmd_run

    from mlab.cli.eval import cmd_eval, cmd_report, cmd_view
    from mlab.cli.sweep import cmd_sweep
    from mlab.cli.baseline import cmd_audit, cmd_baseline

    commands = {"prepare": cmd_prepare, "drive": cmd_drive, "checkout": cmd_checkout, "run": cmd_run,
                "list": cmd_list, "eval": cmd_eval, "report": cmd_report, "view": cmd_view, "sweep": cmd_sweep,
                "baseline": cmd_baseline, "audit": cmd_audit}
    try:
        return commands[args.verb](args)
    except MlabError as problem:
        print(f"mlab: {problem}", file=sys.stderr)
        return problem.exit_code
    except BrokenPipeError:
        return EXIT_OK
    except OSError as problem:
        print(f"mlab: {problem.strerror or problem}: {problem.filename or ''}".rstrip(": "), file=sys.stderr)
        return EXIT_IO
    except KeyboardInterrupt:
        print("mlab: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED

