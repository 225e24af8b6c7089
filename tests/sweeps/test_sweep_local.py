"""The local executor end to end: a sweep killed in the middle, run again, adding a seed; --plan."""
from __future__ import annotations

import json
import subprocess
import time

from sweep_helpers import (compile_build, processes_mentioning, run_folders, run_sweep, state, sweep_command,
                           trace_steps, write_experiment)

from mlab.cli import main

MIXED = """\
experiment mixed {{
  tasks [house-price, tiny]
  agents [research]
  models ["mlab/demo"]
  runs {runs}
  data lite
  limits {{ steps 3 }}
  override house-price {{ runs 1 }}
}}
"""


def _experiment(project, runs: int, build: str) -> str:
    source = write_experiment(project, MIXED.format(runs=runs))
    return str(compile_build(source, project / build) / "experiments" / "mixed.yaml")


def _wait_for_a_step(process, sweep, timeout=180.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(trace_steps(run) for run in run_folders(sweep)):
            return
        assert process.poll() is None, process.communicate()[0]
        time.sleep(0.05)
    raise AssertionError("no run took a step in time")


def _wait_until_gone(text: str, timeout=10.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while processes_mentioning(text) and time.monotonic() < deadline:
        time.sleep(0.1)
    return processes_mentioning(text)


def test_a_killed_sweep_continues_and_each_run_finishes_exactly_once(project):
    experiment = _experiment(project, runs=2, build="build")
    sweep = project / "runs" / "mixed"
    process = subprocess.Popen(sweep_command(experiment, "--workers", "2", "--plain"), cwd=project,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    _wait_for_a_step(process, sweep)
    process.kill()
    process.wait()
    process.stdout.close()
    before = {run.name: trace_steps(run) for run in run_folders(sweep)}
    assert any(not (sweep / "runs" / name / "result.json").exists() for name in before), before
    assert _wait_until_gone(str(sweep / "runs")) == [], "a run outlived the killed sweep"

    plan = run_sweep(experiment, "--plan", cwd=project)
    assert plan.returncode == 0 and "resume " in plan.stdout, plan.stdout

    again = run_sweep(experiment, "--workers", "2", "--plain", cwd=project)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "3 of 3 runs done, 0 failed, 0 unfinished" in again.stdout
    runs = run_folders(sweep)
    assert len(list((sweep / "runs").rglob("result.json"))) == len(runs) == 3
    results = {run.name: json.loads((run / "result.json").read_text()) for run in runs}
    assert sorted((r["task"], r["seed"]) for r in results.values()) == [("house-price", 0), ("tiny", 0), ("tiny", 1)]
    for run in runs:
        records = [json.loads(line) for line in (run / "trace.jsonl").read_text().splitlines()]
        assert [r["step"] for r in records] == list(range(1, len(records) + 1))
        assert results[run.name]["steps"] == sum(r["status"] in ("ok", "error", "final") for r in records)
    for name, steps in before.items():  # the killed runs went on in their own folders
        assert trace_steps(sweep / "runs" / name)[:len(steps)] == steps
    assert {entry["status"] for entry in state(sweep)["runs"].values()} == {"done"}
    assert (sweep / "runs.md").is_file() and (sweep / "report" / "report.md").is_file()

    # A third seed in the experiment: only that run is added.
    finished = {run.name: (run / "result.json").read_bytes() for run in runs}
    bigger = _experiment(project, runs=3, build="build-3-seeds")
    plan = run_sweep(bigger, "--plan", cwd=project)
    planned = [line.split() for line in plan.stdout.splitlines() if line.startswith("  ") and "mlab/demo" in line]
    assert sorted((line[0], line[1], line[4]) for line in planned) == [
        ("done", "house-price", "0"), ("done", "tiny", "0"), ("done", "tiny", "1"), ("new", "tiny", "2")]
    assert "to run: 1 (new 1, resume 0, retry 0); done: 3" in plan.stdout
    report_before = (sweep / "report" / "report.md").read_bytes()
    more = run_sweep(bigger, "--plain", "--no-report", cwd=project)
    assert more.returncode == 0, more.stdout + more.stderr
    # --no-report: runs.md lists the new run, the report is left as it was
    assert f"run table: {sweep / 'runs.md'}" in more.stdout and "report: " not in more.stdout
    assert (sweep / "report" / "report.md").read_bytes() == report_before
    assert sum("| done |" in line for line in (sweep / "runs.md").read_text().splitlines()) == 4
    assert [line.split()[1] for line in more.stdout.splitlines() if line.startswith("start ")] == [
        "tiny/research/lite/main=mlab/demo/seed=2"]
    assert len(run_folders(sweep)) == 4
    assert all((sweep / "runs" / name / "result.json").read_bytes() == data for name, data in finished.items())


def test_plan_lists_runs_resources_and_calls_without_running(project, capsys):
    experiment = _experiment(project, runs=2, build="build")
    assert main(["sweep", experiment, "--plan", "--runs-dir", str(project / "out")]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.startswith("  ") and "mlab/demo" in line]
    # status task agent models seed data cpus gpus memory steps calls cost (the demo model is free)
    assert rows == [
        ["new", "house-price", "research", "main=mlab/demo", "0", "lite", "2", "0", "8", "GiB", "3", "4", "$0.00"],
        ["new", "tiny", "research", "main=mlab/demo", "0", "lite", "1", "0", "1", "GiB", "3", "4", "$0.00"],
        ["new", "tiny", "research", "main=mlab/demo", "1", "lite", "1", "0", "1", "GiB", "3", "4", "$0.00"]]
    assert "to run: 3 (new 3, resume 0, retry 0); done: 0" in out
    assert "estimated model calls: about 12 " in out
    assert not (project / "out").exists()
