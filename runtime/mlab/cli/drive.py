"""`mlab drive`: run a JSON list of actions (or a task's demo.json) through a run (the scripted
driver, no model); a run that ends is scored into result.json like `mlab run`'s, with "driven": true."""
from __future__ import annotations

from pathlib import Path

from mlab.cli import args as shared
from mlab.errors import EXIT_OK, UsageError
from mlab.text import printable


def add_arguments(parser) -> None:
    shared.add_task(parser, optional=True)
    parser.add_argument("--actions", required=True, metavar="FILE.json",
                        help='JSON list of {"action": NAME, "input": {...}}, or a task\'s demo.json')
    parser.add_argument("--agent", metavar="A", help="agent whose action table is used (default: the task's)")
    shared.add_data(parser)
    shared.add_runs_dir(parser)
    shared.add_resume(parser)
    parser.add_argument("--steps", type=int, metavar="N", help="step limit (overrides the task's)")
    parser.add_argument("--time", metavar="T", help="time limit, e.g. 90s, 30m, 5h (overrides the task's)")
    shared.add_build(parser)
    shared.add_python(parser)
    parser.add_argument("--device", metavar="D", help="CUDA_VISIBLE_DEVICES for scripts")
    parser.add_argument("--seed", type=int, default=0, help="the run's seed (default 0)")
    parser.add_argument("--quiet", action="store_true", help="print only the summary, not each observation")
    shared.add_json(parser, "the result (result.json, labelled \"driven\": true), last,")


def _step_printer(steps: int | None):
    """Prints each driven step; wind-down after a limit is shown 'at limit', not as a step past it."""
    from mlab.limits import is_wind_down, step_label

    def print_step(record: dict, observation) -> None:
        # the action's name (an unknown one as given) and the observation are the agent's and its scripts'
        name = record["resolved"]["action"] if record["resolved"] else record["action"]
        status = record["status"]
        if status == "shutdown" and is_wind_down(record, steps):
            status = "not run: limit reached"
        print(f"--- {step_label(record, steps)}: {printable(name)} [{status}]")
        print(printable(observation.text))
    return print_step


def main(args) -> int:
    from mlab.build import resolve_task
    from mlab.limits import limit_overrides
    from mlab.run.drive import drive, load_actions
    from mlab.run.folder import Run

    actions = load_actions(Path(args.actions))
    if args.resume:
        if args.task or args.build or args.agent:
            raise UsageError("--resume continues a run as it was created; do not give TASK, --build or --agent")
        from mlab.scoring.result import RESULT

        if (Path(args.resume) / RESULT).is_file():
            raise UsageError(f"{args.resume} is finished (it has a {RESULT}); start a new run instead")
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
    from mlab.scoring.validation import install as install_validation

    install_validation(run)  # Validate Submission needs the run's task and public test ids
    try:
        drive(run, actions, on_step=None if args.quiet else _step_printer(run.limits.steps))
    finally:
        run.close()
    if not run.ended:
        print(f"run {run.id}: {run.steps_taken} steps taken, not ended (the actions ran out); continue with "
              f"`mlab drive --resume {run.dir} --actions FILE`")
        return EXIT_OK
    from mlab.limits import counted_steps

    print(f"run {run.id} ended after {counted_steps(run.records, run.limits.steps)} steps ({run.end_reason})")
    result = score_driven(run)
    if getattr(args, "json", False):
        from mlab.cli.args import print_json

        print_json(args, result)
    return EXIT_OK  # the actions were driven; whether they won is result.json's "success"


def score_driven(run) -> dict:
    """Score an ended driven run into result.json (no models: "models" is empty, "driven" true)."""
    import sys

    from mlab.agent.outcome import LoopOutcome
    from mlab.cli.run import print_result, score_apart, write_summary
    from mlab.failure import FailureMode
    from mlab.scoring.result import write_result

    reason = run.end_reason or "ended"
    limited = reason.endswith("_limit")
    outcome = LoopOutcome(reason, FailureMode.LIMIT_REACHED if limited else None,
                          reason.replace("_", " ") if limited else None)
    print("scoring the submission...", file=sys.stderr, flush=True)
    result = score_apart(lambda: write_result(run, outcome, {}, {"api_base": None}, False, driven=True), run.dir)
    write_summary(Path(run.dir))
    print("DRIVEN by `mlab drive` from a file of actions — not an agent result")
    print_result(run, result)
    return result
