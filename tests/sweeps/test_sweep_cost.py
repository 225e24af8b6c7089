"""The sweep's cost limit (`mlab sweep --cost USD`): runs start while the spent total is under it,
each with the budget left as its own cost limit; the sweep stops starting runs once it is reached
and says so; unpriced models under a cost limit are refused before anything starts."""
from __future__ import annotations

import io
import json
import textwrap

import pytest
from sweep_helpers import compile_build, write_tiny_task

from mlab.cli import main
from mlab.errors import UsageError
from mlab.sweeps.budget import SweepBudget, refuse_unpriced
from mlab.sweeps.executors import Attempt, Ended, Executor
from mlab.sweeps.plan import RunSpec
from mlab.sweeps.progress import Progress
from mlab.sweeps.report import run_table
from mlab.sweeps.runner import Sweep
from mlab.sweeps.state import SweepFolder, Work


def spec(seed: int, cost: float | None = None) -> RunSpec:
    return RunSpec(task="t", agent="a", data="lite", seed=seed, models=(("main", "gpt-4o"),), steps_limit=10,
                   limits=(("cost", cost),) if cost is not None else (), hardware={"cpus": 1})


class SpendingExecutor(Executor):
    """One run at a time; each run spends $0.40, or stops at its cost limit once a call passes it
    (as `mlab run --cost` does: the call that crosses the limit is the last, here $0.01 past it)."""

    def __init__(self, folder: SweepFolder):
        self.folder, self.active, self.limits, self.arguments, self.count = folder, [], [], [], 0

    def has_room(self) -> bool:
        return not self.active

    def try_start(self, work: Work) -> Attempt | None:
        self.count += 1
        name = f"run-{self.count}"
        self.folder.run_dir(name).mkdir(parents=True)
        self.limits.append(dict(work.spec.limits).get("cost"))
        self.arguments.append(work.spec.run_arguments(self.folder.root / "build", self.folder.runs))
        attempt = Attempt(work, self.folder.log_path(work.spec), run_name=name)
        self.active.append(attempt)
        return attempt

    def poll(self, timeout_s):
        ended, self.active = self.active, []
        for attempt in ended:
            limit = dict(attempt.work.spec.limits)["cost"]
            cost = 0.40 if limit > 0.40 else round(limit + 0.01, 2)
            (self.folder.run_dir(attempt.run_name) / "result.json").write_text(json.dumps({"cost": cost}))
        return [Ended(attempt, 0) for attempt in ended]

    def running(self):
        return list(self.active)

    def stop(self, hard):
        pass


def _sweep(tmp_path, specs, limit):
    folder = SweepFolder(tmp_path / "sweep")
    folder.create()
    executor, out = SpendingExecutor(folder), io.StringIO()
    budget = SweepBudget(limit, folder)
    sweep = Sweep("exp", specs, folder, executor, 0, Progress("exp", stream=out, live=False), budget=budget)
    return sweep, executor, budget, out


def test_the_sweep_stops_starting_runs_at_its_cost_limit(tmp_path):
    """$1.00 for five runs of $0.40: run 1 gets $1.00, run 2 the $0.60 left, run 3 the $0.20
    left (it stops at $0.21); $1.01 is spent, so runs 4 and 5 are not started."""
    runs = [spec(seed) for seed in range(5)]
    sweep, executor, budget, out = _sweep(tmp_path, runs, 1.0)
    outcome = sweep.run()
    assert executor.limits == pytest.approx([1.0, 0.6, 0.2])
    assert executor.arguments[1][-2:] == ["--cost", "0.6"]  # what `mlab run` is given
    assert (outcome.done, outcome.unfinished, outcome.stopped_for_cost, outcome.exit_code) == (3, 2, True, 1)
    assert budget.spent(sweep.state) == pytest.approx(1.01)
    assert "cost limit $1 reached ($1.0100 spent): no more runs are started" in out.getvalue()
    assert "cost $1.0100 of $1]" in out.getvalue()  # the status line shows the limit beside the spending
    table = run_table("exp", runs, sweep.state, sweep.folder, budget.summary(sweep.state))
    assert "**Stopped for cost: the sweep's cost limit $1 was reached ($1.0100 spent)" in table
    assert table.count("| pending |") == 2


def test_an_experiments_own_lower_cost_limit_is_kept(tmp_path):
    runs = [spec(0, cost=0.3), spec(1, cost=0.3)]
    sweep, executor, _, _ = _sweep(tmp_path, runs, 0.5)
    sweep.run()
    # run 1: its own $0.30 (under the $0.50 left), spends $0.31; run 2: the $0.19 left
    assert executor.limits == pytest.approx([0.3, 0.19])


def test_unpriced_models_under_a_cost_limit_are_refused_by_name():
    refuse_unpriced(1.0, {"r1": {"gpt-4o", "mlab/demo"}})  # priced, and free: accepted
    with pytest.raises(UsageError) as problem:
        refuse_unpriced(1.0, {"r1": {"gpt-4o"}, "r2": {"openai/a-model-nobody-prices"}})
    assert "--cost $1 cannot be enforced" in str(problem.value)
    assert "openai/a-model-nobody-prices (run r2)" in str(problem.value)


def test_mlab_sweep_cost_refuses_an_unpriced_model_before_any_run(tmp_path, sweep_env, capsys):
    write_tiny_task(tmp_path)
    (tmp_path / "exp.mlab").write_text(textwrap.dedent("""\
        use "tiny.mlab"
        experiment priced {
          tasks [tiny]
          agents [research]
          models ["openai/a-model-nobody-prices"]
        }
        """))
    build = compile_build(tmp_path / "exp.mlab", tmp_path / "build")
    code = main(["sweep", str(build / "experiments" / "priced.yaml"), "--cost", "2", "--runs-dir", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2 and "--cost $2 cannot be enforced" in err and "openai/a-model-nobody-prices" in err
    assert not (tmp_path / "r").exists()


def test_the_plan_shows_an_unpriced_runs_cost_as_unknown_never_zero(capsys):
    from mlab.cli.sweep import print_plan

    run = {"status": "new", "task": "t", "agent": "a", "models": {"main": "x/unlisted"}, "seed": 0, "data": "lite",
           "cpus": 1, "gpus": 0, "gpus_required": False, "memory_bytes": None, "steps": 10, "estimated_calls": 12,
           "estimated_cost_usd": None}
    plan = {"experiment": "e", "build": "b", "folder": "f", "runs": [run, {**run, "steps": None, "estimated_calls": None}],
            "to_run": {"total": 2, "new": 2, "resume": 0, "retry": 0}, "done": 0, "failed": 0, "estimated_calls": 12,
            "runs_without_step_limit": 1, "estimated_cost_usd": 0, "runs_without_price": 1, "cost_assumption": "estimate"}
    print_plan(plan, 0)
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[2].rstrip().endswith("12    unknown") and lines[3].rstrip().endswith("-          -")
    assert "estimated cost: unknown price (1 run(s) whose model has no price in litellm's map)" in out
    assert "$0.00" not in out


def test_the_run_table_says_unknown_price_for_a_finished_unpriced_run(tmp_path):
    folder = SweepFolder(tmp_path / "sweep")
    folder.create()
    folder.run_dir("r1").mkdir(parents=True)
    (folder.run_dir("r1") / "result.json").write_text(json.dumps({"cost": None, "score": 1.0, "steps": 2}))
    runs = [spec(0), spec(1)]
    state = {"runs": {runs[0].key: {"status": "done", "run": "r1", "attempts": 1}, runs[1].key: {"status": "pending"}}}
    lines = run_table("exp", runs, state, folder).splitlines()
    assert "| unknown price |" in lines[4] and "unknown price" not in lines[5]  # a pending run shows nothing
