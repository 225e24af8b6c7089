"""`mlab sweep`: run a declared experiment's runs with an executor, then report them.

Exit codes: 0 every run finished, 1 some run failed (after its retries) or is left unfinished,
2 usage, 3 I/O, 130 stopped (Ctrl-C); a sweep run again continues where it stopped.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from mlab.cli import args as shared
from mlab.errors import UsageError
from mlab.text import printable
from mlab.sweeps.plan import (Experiment, RunSpec, chosen_tasks, expand, limits_not_passed, load_experiment,
                              select)
from mlab.sweeps.state import DONE, FAILED, SweepFolder, Work, reconcile, steps_taken


def add_arguments(parser) -> None:
    parser.add_argument("experiment", metavar="EXPERIMENT",
                        help="experiment name (from ./tasks or the bundled tasks), a .mlab file (FILE.mlab or "
                             "FILE.mlab:NAME) or build/experiments/<name>.yaml")
    parser.add_argument("--executor", choices=("local", "ray"), default="local",
                        help="local: worker processes here (default); ray: Ray tasks on a cluster")
    parser.add_argument("--workers", type=int, metavar="K",
                        help="runs at once (local default: CPUs / the CPUs a task declares; ray: as the cluster fits)")
    parser.add_argument("--devices", metavar="0,1,...",
                        help="GPUs to hand out to runs of tasks that declare GPUs, one run per device (local)")
    parser.add_argument("--address", metavar="ADDR",
                        help="Ray cluster to join ('auto': the one this machine belongs to); default: start one here")
    parser.add_argument("--runs-dir", default="runs", metavar="DIR",
                        help="the sweep's folder is DIR/<experiment>/ (default runs/)")
    parser.add_argument("--plan", action="store_true",
                        help="print the runs, their resources and an estimate of model calls; run nothing")
    parser.add_argument("--cost", type=float, metavar="USD",
                        help="a cost limit for the whole sweep, in dollars: no run starts once the runs have spent "
                             "it, and each run started gets the budget left as its own cost limit; refused when a "
                             "model of the runs has no price")
    parser.add_argument("--tasks", metavar="T,...", help="only the runs of these tasks (with --plan or to run)")
    parser.add_argument("--agents", metavar="A,...", help="only the runs of these agents (with --plan or to run)")
    shared.add_json(parser, "the plan (with --plan)")
    parser.add_argument("--retry-failed", action="store_true",
                        help="give runs that used up their retries another round of attempts")
    parser.add_argument("--no-report", action="store_true",
                        help="write only the run table, not the report (make it later with `mlab report DIR/runs`)")
    shared.add_plain(parser, help="plain progress lines even on a terminal")


def parse_devices(text: str | None) -> list[str]:
    if text is None:
        return []
    devices = [d.strip() for d in text.split(",")]
    if not all(devices) or len(set(devices)) != len(devices):
        raise UsageError(f"--devices takes distinct device numbers separated by commas (e.g. 0,1), not {text!r}")
    return devices


def _check_arguments(args, specs: list[RunSpec], devices: list[str]) -> None:
    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be 1 or more")
    if args.address and args.executor != "ray":
        raise UsageError("--address names a Ray cluster; use it with --executor ray")
    if devices and args.executor != "local":
        raise UsageError("--devices is for the local executor; Ray hands out the GPUs of its nodes itself")
    if args.executor == "local":
        for spec in specs:
            if spec.gpus_required and spec.gpus > len(devices):
                have = f"only {len(devices)} given" if devices else "give them with --devices 0,1,..."
                raise UsageError(f"task {spec.task} requires {spec.gpus} GPU(s); {have}")


def default_workers(specs: list[RunSpec]) -> int:
    cpus = max((int(s.hardware.get("cpus") or 1) for s in specs), default=1)
    return max(1, (os.cpu_count() or 1) // max(cpus, 1))


# -- the plan --------------------------------------------------------------------------

def _memory(value) -> str:
    return "-" if not value else f"{value / 2**30:g} GiB"


def _status(spec: RunSpec, state: dict, to_do: dict[str, Work]) -> str:
    work = to_do.get(spec.key)
    if work is not None:
        return work.kind
    return "done" if state["runs"][spec.key]["status"] == DONE else "failed"


def plan_document(experiment: Experiment, specs: list[RunSpec], folder: SweepFolder, retries: int,
                  retry_failed: bool) -> dict:
    """The runs, what each needs, and the model calls and cost the rest may take; nothing is changed."""
    from mlab.sweeps.plan import COST_ASSUMPTION, estimated_cost

    state = folder.load(experiment.name)
    to_do = {w.spec.key: w for w in reconcile(folder, state, specs, retries, retry_failed, dry=True)}
    runs = []
    for spec in specs:
        work = to_do.get(spec.key)
        done_steps = steps_taken(folder.run_dir(work.resume)) if work and work.resume else 0
        estimate = spec.estimated_calls(done_steps) if work else 0
        main = dict(spec.models).get("main") or experiment.build.agent(spec.agent).view.models.main.default
        runs.append({"status": _status(spec, state, to_do), "task": spec.task, "agent": spec.agent,
                     "models": dict(spec.models), "main_model": main, "seed": spec.seed, "data": spec.data,
                     "cpus": spec.hardware.get("cpus", 1), "gpus": spec.gpus, "gpus_required": spec.gpus_required,
                     "memory_bytes": spec.hardware.get("memory"), "steps": spec.steps_limit,
                     "estimated_calls": estimate, "estimated_cost_usd": estimated_cost(main, estimate)})
    kinds = [w.kind for w in to_do.values()]
    costs = [r["estimated_cost_usd"] for r in runs if r["status"] != "done" and r["status"] != "failed"
             and r["estimated_calls"] is not None]  # a run without a step limit has no estimate, priced or not
    return {"experiment": experiment.name, "build": str(experiment.build.dir), "folder": str(folder.root),
            "runs": runs, "to_run": {"total": len(to_do), "new": kinds.count("new"), "resume": kinds.count("resume"),
                                     "retry": kinds.count("retry")},
            "done": sum(1 for s in specs if state["runs"][s.key]["status"] == DONE),
            "failed": sum(1 for s in specs if s.key not in to_do and state["runs"][s.key]["status"] == FAILED),
            "estimated_calls": sum(r["estimated_calls"] or 0 for r in runs),
            "runs_without_step_limit": sum(1 for r in runs if r["status"] not in ("done", "failed")
                                           and r["estimated_calls"] is None),
            "estimated_cost_usd": sum(c for c in costs if c is not None),
            "runs_without_price": sum(1 for c in costs if c is None), "cost_assumption": COST_ASSUMPTION}


def _estimate(run: dict) -> str:
    """A run's estimated cost: '-' without a step limit to estimate from, 'unknown' for a model
    without a price (never $0)."""
    if run["estimated_calls"] is None:
        return "-"
    cost = run["estimated_cost_usd"]
    return "unknown" if cost is None else f"${cost:,.2f}"


def print_plan(plan: dict, retries: int) -> None:
    print(f"experiment {plan['experiment']}: {len(plan['runs'])} runs; build {plan['build']}; folder {plan['folder']}")
    header = f"  {'status':<7} {'task':<20} {'agent':<16} {'models':<34} {'seed':>4} {'data':<5} " \
             f"{'cpus':>4} {'gpus':>5} {'memory':>8} {'steps':>5} {'calls':>6} {'est. cost':>10}"
    print(header)
    for run in plan["runs"]:
        models = " ".join(f"{tier}={model}" for tier, model in run["models"].items()) or "(agent defaults)"
        gpus = f"{run['gpus']}{'' if not run['gpus'] else '!' if run['gpus_required'] else '?'}"
        print(f"  {run['status']:<7} {run['task']:<20} {run['agent']:<16} {models:<34} {run['seed']:>4} "
              f"{run['data']:<5} {run['cpus']:>4} {gpus:>5} {_memory(run['memory_bytes']):>8} "
              f"{run['steps'] if run['steps'] is not None else '-':>5} "
              f"{'-' if run['estimated_calls'] is None else run['estimated_calls']:>6} "
              f"{_estimate(run):>10}")
    to_run = plan["to_run"]
    print(f"to run: {to_run['total']} (new {to_run['new']}, resume {to_run['resume']}, retry "
          f"{to_run['retry']}); done: {plan['done']}; failed after {retries + 1} attempt(s): {plan['failed']}")
    extra = f" (+ {plan['runs_without_step_limit']} run(s) without a step limit)" if plan["runs_without_step_limit"] else ""
    print(f"estimated model calls: about {plan['estimated_calls']:,}{extra} (each run's step limit left × 1.25 "
          "for helper-model calls)")
    unpriced = plan["runs_without_price"]
    priced = sum(1 for r in plan["runs"] if r["status"] not in ("done", "failed")
                 and r["estimated_cost_usd"] is not None and r["estimated_calls"] is not None)
    if unpriced and not priced:  # nothing priced: unknown, not $0
        shown = f"unknown price ({unpriced} run(s) whose model has no price in litellm's map)"
    else:
        shown = f"about ${plan['estimated_cost_usd']:,.2f}" + (
            f" (+ {unpriced} run(s) of unknown price: a model without a price)" if unpriced else "")
    print(f"estimated cost: {shown}; {plan['cost_assumption']}")
    print("gpus: ! required, ? optional (used when devices are given)")


def _warn_limits(specs: list[RunSpec]) -> None:
    skipped = limits_not_passed(specs)
    if skipped:
        print(f"note: the experiment's {', '.join(skipped)} limit(s) are not applied: `mlab run` takes "
              "them from the task only", file=sys.stderr)


# -- running ---------------------------------------------------------------------------

def _executor(args, experiment: Experiment, folder: SweepFolder, specs: list[RunSpec], devices: list[str]):
    if args.executor == "ray":
        from mlab.sweeps.ray import RayExecutor

        executor = RayExecutor(folder, experiment.build.dir, args.workers, args.address)
        try:
            executor.check_fits(specs)
        except BaseException:
            executor.close()
            raise
        return executor
    from mlab.sweeps.local import LocalExecutor

    return LocalExecutor(folder, experiment.build.dir, args.workers or default_workers(specs), devices)


def _models_by_run(experiment: Experiment, specs: list[RunSpec]) -> dict[str, set[str]]:
    """The models each run will call: the experiment's, and the agents' defaults for tiers it leaves open."""
    from mlab.cli.tiers import resolve_models

    out = {}
    for spec in specs:
        given = dict(spec.models)
        tiers = resolve_models(experiment.build.agent(spec.agent).view, given.get("main"), given.get("fast"),
                               given.get("edit"),
                               give=f"give experiment {experiment.name} its models")
        out[spec.key] = {tier["model"] for tier in tiers.values()}
    return out


def _check_keys(experiment: Experiment, specs: list[RunSpec]) -> None:
    """Before any run starts: every model the runs will call (the agents' defaults for tiers the
    experiment leaves open) has its key, so a missing key is one message, not a failed sweep."""
    from mlab.models.client import check_keys
    from mlab.models.errors import MissingKey

    models = set().union(*_models_by_run(experiment, specs).values())
    try:
        check_keys(sorted(models), hint=f"set it, or give experiment {experiment.name} models that need no key "
                                        "(e.g. models [\"mlab/demo\"])")
    except MissingKey as problem:
        raise UsageError(f"{problem} (needed by the runs of experiment {experiment.name})") from None


def main(args) -> int:
    experiment = load_experiment(args.experiment)
    specs = _chosen_runs(args, experiment)
    devices = parse_devices(args.devices)
    _check_arguments(args, specs, devices)
    folder = SweepFolder(Path(args.runs_dir) / experiment.name)
    if args.plan:
        plan = plan_document(experiment, specs, folder, experiment.retries, args.retry_failed)
        if args.json:
            from mlab.cli.args import print_json

            print_json(args, plan)
        else:
            print_plan(plan, experiment.retries)
        _warn_limits(specs)
        return 0
    budget = None
    if args.cost is not None:
        from mlab.sweeps.budget import SweepBudget, refuse_unpriced

        refuse_unpriced(args.cost, _models_by_run(experiment, specs))
        budget = SweepBudget(args.cost, folder)
    _check_keys(experiment, specs)
    _warn_limits(specs)
    return _run_sweep(args, experiment, specs, devices, folder, budget)


def _chosen_runs(args, experiment: Experiment) -> list[RunSpec]:
    """The experiment's runs that --tasks and --agents choose; refused when there are none."""
    skipped: list[str] = []
    specs = expand(experiment, chosen_tasks(experiment, args.tasks), skipped)
    for line in skipped:
        print(printable(line))  # with --json, on stderr
    if not specs:
        raise UsageError(f"experiment {experiment.name} expands to no runs "
                         + ("(no task chosen has the data variant it asks for)" if skipped
                            else "(check its runs and models)"))
    specs = select(specs, None, args.agents)
    if args.json and not args.plan:
        raise UsageError("--json prints the plan: use it with --plan")
    return specs


def _run_sweep(args, experiment: Experiment, specs: list[RunSpec], devices: list[str], folder: SweepFolder,
               budget) -> int:
    """The runs done by the executor in the sweep's locked folder, then reported."""
    from mlab.sweeps.progress import Progress
    from mlab.sweeps.report import report_sweep
    from mlab.sweeps.runner import Sweep, stop_on_signals

    folder.create()
    folder.lock()
    try:
        executor = _executor(args, experiment, folder, specs, devices)
        progress = Progress(experiment.name, live=False if args.plain else None)
        workers = getattr(executor, "workers", None)
        print(f"sweep {experiment.name}: {len(specs)} runs, {args.executor} executor"
              f"{f', {workers} workers' if workers else ''}; folder {folder.root}", flush=True)
        sweep = Sweep(experiment.name, specs, folder, executor, experiment.retries, progress, budget=budget)
        with stop_on_signals(sweep.stop):
            try:
                outcome = sweep.run(args.retry_failed)
            finally:
                executor.close()
        progress.close()
        held = budget.summary(sweep.state) if outcome.stopped_for_cost else None
        for note in report_sweep(experiment.name, specs, sweep.state, folder, with_report=not args.no_report,
                                 stopped_for=held):
            print(printable(note))
    finally:
        folder.unlock()
    print(f"{outcome.done} of {len(specs)} runs done, {outcome.failed} failed, {outcome.unfinished} unfinished"
          + ("; stopped: run the same command again to continue" if outcome.stopped else "")
          + (f"; {held}" if held else ""))
    return outcome.exit_code
