"""`mlab run --reproduce RUN`: a new run made from RUN's lock, and the table of what differs.

The new run takes the build copied into RUN (so the same task and agent artifacts, even when the
sources have changed since), the locked models per tier with their parameters (or, with
`--replay`, `mlab/replay:RUN` for every tier, which replays RUN's recorded replies), the seed, the
limits and the data variant. Its own lock and result are compared with RUN's afterwards.
"""
from __future__ import annotations

from pathlib import Path

from mlab.errors import UsageError

# Options that --reproduce takes from the lock instead (the runs folder, interpreter and device may vary).
FROM_LOCK = (("TASK", "task"), ("--agent", "agent"), ("--model", "model"), ("--fast-model", "fast_model"),
             ("--edit-model", "edit_model"), ("--api-base", "api_base"), ("--build", "build"), ("--data", "data"),
             ("--seed", "seed"), ("--steps", "steps"), ("--time", "time"), ("--tokens", "tokens"),
             ("--cost", "cost"), ("--script-timeout", "script_timeout"), ("--memory", "memory"),
             ("--disk", "disk"), ("--resume", "resume"), ("--no-tools", "no_tools"))


def open_reproduction(args):
    """The new run and its loop configuration (as `mlab run` writes to models.json)."""
    from mlab.build import load_build
    from mlab.run.folder import Run
    from mlab.run.meta import LOOP_CONFIG
    from mlab.run.lock import read_lock

    given = [flag for flag, name in FROM_LOCK if getattr(args, name, None) not in (None, False)]
    if given:
        raise UsageError(f"--reproduce takes the task, agent, models, build, data, seed and limits from the "
                         f"run's lock; do not give {', '.join(given)}")
    original = Path(args.reproduce)
    lock = read_lock(original)
    build = load_build(original / "build", check_fresh=False)
    if lock["task"] not in build.task_names or lock["agent"] not in build.agent_names:
        raise UsageError(f"{original}/build does not hold task {lock['task']} and agent {lock['agent']}")
    task, agent = build.task(lock["task"]), build.agent(lock["agent"])
    tiers = {tier: dict(config) for tier, config in lock["models"].items()}
    if args.replay:
        for config in tiers.values():
            config.update(model=f"mlab/replay:{original.resolve()}", params={}, source="option")
    else:
        from mlab.models.client import check_keys

        check_keys({tier: t["model"] for tier, t in tiers.items()}, lock.get("api_base"),
                   hint="set it, or add --replay to replay the run's recorded replies without a key")
    from mlab.models.client import import_litellm_for

    import_litellm_for([t["model"] for t in tiers.values()])
    config = {"tiers": tiers, "api_base": lock.get("api_base"), "seed": lock["seed"], "reproduces": str(original)}
    if lock.get("no_tools"):
        config["no_tools"] = True
    # with models.json from its start, a reproduction stopped half way continues with `mlab run --resume`
    run = Run.create(task, agent, Path(args.runs_dir), data=lock["data"]["variant"], seed=lock["seed"],
                     limits=lock["limits"], python=args.python, device=args.device, extra={LOOP_CONFIG: config})
    return run, config


def difference_table(original: Path, again: Path, checked: list | None = None) -> str:
    """The rows in which the reproduction differs from the original, or a line saying none do. The
    original is a run folder from elsewhere, hostile data: its build copy is compared with the build
    this checkout compiles (an edited copy is a difference), and `checked` holds the rows of what the
    harness recomputed of it (its final submission scored again: see mlab.cli.run)."""
    from mlab.errors import MlabError
    from mlab.run.lock import build_copy_rows, difference_rows, read_lock, render_rows, run_facts

    rows = build_copy_rows(original, read_lock(original)) + list(checked or [])
    try:
        rows += difference_rows(run_facts(original), run_facts(again))
    except MlabError as problem:   # the original's result.json or trace is not to be read
        rows.append(("original run", "not read", str(problem)))
    if not rows:
        return (f"reproduction of {original}: no differences (score, steps, trace, data, task version, "
                "packages and hardware class as the original's)")
    return (f"reproduction of {original}: {len(rows)} difference{'s' if len(rows) != 1 else ''}\n"
            + render_rows(rows, ("what", "original", "reproduction")))
