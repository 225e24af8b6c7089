"""`mlab baseline`: the starter's score, recorded with provenance, used by the runtime while it holds."""
from __future__ import annotations

import json
import re

import pytest

from mlab.scoring import timed
from mlab.cli import main as mlab_main


def test_baseline_reports_the_starters_score_and_the_record(capsys, suite_build):
    assert mlab_main(["baseline", "house-price", "--build", str(suite_build.dir)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("house-price (lite): the starter train.py scored mae ")
    assert "(lower is better)" in out and "code hash matches" in out


def test_record_writes_provenance_and_the_runtime_uses_it_until_the_code_changes(task_copy, capsys):
    from mlab.scoring.baseline import recorded_baseline

    task = task_copy("spaceship-titanic")
    assert mlab_main(["baseline", "spaceship-titanic", "--build", str(task.build.dir), "--record"]) == 0
    assert f"recorded in {task.root / 'baselines.json'}" in capsys.readouterr().out
    entry = json.loads((task.root / "baselines.json").read_text())["baselines"]["spaceship-titanic"]["lite"]
    assert {"value", "seed", "code_hash", "mlab_version", "tolerance", "script", "recorded"} <= set(entry)
    assert entry["seed"] == 42 and entry["script"] == "train.py" and entry["metric"] == "accuracy"
    recorded = recorded_baseline(task, "lite")
    assert recorded["value"] == entry["value"] and recorded["measured"] is True
    starter = task.root / "spaceship-titanic" / "env" / "train.py"
    starter.write_text(starter.read_text() + "\n# changed\n")
    assert recorded_baseline(task, "lite") is None


def test_a_run_takes_its_baseline_from_the_record(task_of, tmp_path):
    from mlab.scoring.baseline import measure_baseline
    from mlab.run.folder import Run

    task = task_of("feedback")
    run = Run.create(task, task.build.agent("research"), tmp_path / "runs")
    try:
        baseline = measure_baseline(run)
    finally:
        run.close()
    recorded = json.loads((task.root / "baselines.json").read_text())["baselines"]["feedback"]["lite"]
    assert baseline["value"] == recorded["value"] and baseline["from"].endswith("baselines.json")


def test_a_declared_baseline_is_reported_as_deliberate(task_copy, capsys):
    def declare(root):
        path = root / "house-price.mlab"
        path.write_text(path.read_text().replace(
            'baseline   run "train.py"', 'baseline   60000 because "the starter writes no submission"'))

    task = task_copy("house-price", declare)
    assert mlab_main(["baseline", "house-price", "--build", str(task.build.dir), "--record"]) == 0
    out = capsys.readouterr().out
    assert "declared baseline mae 60000 because 'the starter writes no submission'" in out
    assert "deliberately incomplete" in out and not (task.root / "baselines.json").exists()


def test_a_timed_task_reports_the_starters_time_and_records_nothing(capsys, suite_build, monkeypatch):
    monkeypatch.setattr(timed, "TIMED_RUNS", 1)
    assert mlab_main(["baseline", "vectorization", "--build", str(suite_build.dir), "--record"]) == 0
    out = capsys.readouterr().out
    assert "timed metric: the starter train.py runs in" in out and "no number is recorded" in out
    noise = re.search(r"timing noise here: the starter ran ([0-9.]+)x to ([0-9.]+)x as fast as itself", out)
    assert noise and float(noise.group(1)) <= float(noise.group(2))


def test_an_unknown_task_is_a_clear_error(capsys):
    assert mlab_main(["baseline", "no-such-task"]) == 2  # a usage error, as an unknown agent is
    assert "no task named 'no-such-task'" in capsys.readouterr().err


@pytest.mark.parametrize("verb", ["baseline", "audit"])
def test_help_names_the_options(verb, capsys):
    assert mlab_main([verb, "--help"]) == 0
    out = capsys.readouterr().out
    assert "--data" in out and "--build" in out
