"""Running a task from a program: `run_task`, the one `mlab run` does, in this process.

The rest of mlab's public API (docs/api.md) is defined where its job is: reading a run
(mlab.reports.runs), the Gym environment (mlab.gym.env), the errors (mlab.errors); `mlab`
exports each name from there.
"""
from __future__ import annotations

from pathlib import Path
TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from mlab.reports.runs import LoadedRun


def run_task(task: str, *, agent: str | None = None, model: str | None = None, data: str | None = None,
             seed: int | None = None, runs_dir: str | Path = "runs", build: str | Path | None = None,
             options: tuple[str, ...] | list[str] = ()) -> LoadedRun:
    """Run `task` (a name, or a `.mlab` path) with `agent` (default: the task's) on `model` (default:
    the agent's; "mlab/demo" plays the task's demonstration) as `mlab run` does, in this process, and
    read the finished run folder under `runs_dir`. `options` are more of `mlab run`'s options as
    words (("--steps", "5"), ("--no-tools",)). What `mlab run` refuses (an unknown task or agent, a
    bad option, a missing API key) is raised as an MlabError; a run that fails is returned (its
    result says how it failed). The run's progress is printed on stderr."""
    import contextlib
    import io
    import json
    import sys

    from mlab.cli import build_parser
    from mlab.cli.run import main
    from mlab.errors import EXIT_INTERRUPTED, MlabError, UsageError
    from mlab.reports.runs import load_run

    words = ["run", task, "--runs-dir", str(runs_dir), "--plain", "--json"]
    for flag, value in (("--agent", agent), ("--model", model), ("--data", data), ("--seed", seed), ("--build", build)):
        if value is not None:
            words += [flag, str(value)]
    words += [str(word) for word in options]
    problem = io.StringIO()
    try:
        with contextlib.redirect_stderr(problem):
            args = build_parser("run").parse_args(words)
    except SystemExit:
        said = problem.getvalue().strip().splitlines()
        raise UsageError(f"mlab run: {said[-1] if said else 'bad arguments'}") from None
    document = io.StringIO()
    args.json_stdout = document  # the result document, as `--json` prints it
    with contextlib.redirect_stdout(sys.stderr):
        code = main(args)
    if code == EXIT_INTERRUPTED or not document.getvalue():
        raise MlabError(f"the run of {task} was interrupted before it was scored (`mlab run --resume` continues it)")
    return load_run(Path(runs_dir) / json.loads(document.getvalue())["run_id"])
