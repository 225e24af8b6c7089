"""`mlab drive`: run a JSON list of actions through a run (the scripted driver, no model)."""
from __future__ import annotations

from pathlib import Path

from mlab.errors import EXIT_OK, UsageError


def _print_step(record: dict, observation) -> None:
    name = record["resolved"]["action"] if record["resolved"] else record["action"]
    print(f"--- step {record['step']}: {name} [{record['status']}]")
    print(observation.text)


def main(args) -> int:
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
        agent = task.build.agent(args.agent or task.view.agent)
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
