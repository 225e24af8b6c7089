"""`mlab export RUNS --to mle-bench`: MLE-bench's grading report of runs of tasks with thresholds,
checked against medals worked by hand on copies of a real run of the tiny task (mae, lower is
better) whose scores the tests set."""
from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest
from agent_helpers import mlab
from ruamel.yaml import YAML

TEMPLATE = Path(__file__).parents[1] / "reports" / "data" / "golden-runs" / "template"
THRESHOLDS = {"gold": 1.0, "silver": 2.0, "bronze": 3.0, "median": 4.0, "source": "a leaderboard by hand"}
REPORT_FIELDS = ["competition_id", "score", "gold_threshold", "silver_threshold", "bronze_threshold",
                 "median_threshold", "any_medal", "gold_medal", "silver_medal", "bronze_medal", "above_median",
                 "submission_exists", "valid_submission", "is_lower_better", "created_at", "submission_path"]


NAMES = ["a-gold", "b-bronze", "c-silver", "d-none", "e-median", "f-nothing", "g-no-thresholds", "h-version-2"]


def run_id(name: str) -> str:
    """The run id of a fixture run named by what it tests (run ids have mlab's own shape)."""
    return f"20261202T00000{NAMES.index(name)}-00000{NAMES.index(name)}"


def _copy(target: Path, name: str, score: float | None, thresholds: dict | None = THRESHOLDS,
          version: int | None = None) -> Path:
    run = shutil.copytree(TEMPLATE, target / run_id(name))
    meta = json.loads((run / "run.json").read_text())
    meta["id"] = run_id(name)
    if thresholds is not None:  # a build of its own: build documents are cached per digest
        meta["build"]["digest"] = "5" * 63 + str(version or 1)
        task = run / "build" / "tasks" / "tiny" / "task.yaml"
        yaml = YAML(typ="safe")
        doc = yaml.load(task.read_text())
        doc["references"] = {"points": [], "thresholds": thresholds}
        with task.open("w") as stream:
            yaml.dump(doc, stream)
    if version is not None:
        meta["task_version"] = version
    (run / "run.json").write_text(json.dumps(meta))
    result = json.loads((run / "result.json").read_text())
    result.update(run_id=run_id(name), score=score, submitted=score is not None)
    (run / "result.json").write_text(json.dumps(result))
    return run


@pytest.fixture
def graded(tmp_path) -> Path:
    """Six runs of the tiny task with thresholds and one of the task without (as recorded)."""
    runs = tmp_path / "runs"
    runs.mkdir()
    for name, score in [("a-gold", 0.950000004), ("b-bronze", 2.06924), ("c-silver", 2.0), ("d-none", 3.5),
                          ("e-median", 4.0), ("f-nothing", None)]:
        _copy(runs, name, score)
    _copy(runs, "g-no-thresholds", 0.5, thresholds=None)
    return runs


def test_the_grading_report_has_mle_benchs_fields_and_the_medals_worked_by_hand(graded):
    code, out, err = mlab("export", graded, "--to", "mle-bench")
    assert code == 0, err
    report = json.loads(out)
    assert list(report) == ["total_runs", "total_runs_with_submissions", "total_valid_submissions", "total_medals",
                            "total_gold_medals", "total_silver_medals", "total_bronze_medals", "total_above_median",
                            "competition_reports", "mlab"]
    # gold 0.95, silver 2.0 (a tie reaches it), bronze 2.06924; above the median: all four and 3.5, not 4.0
    assert [report[k] for k in list(report)[:8]] == [6, 5, 5, 3, 1, 1, 1, 4]
    by_run = {NAMES[int(r["mlab"]["run_id"][-1])]: r for r in report["competition_reports"]}
    assert all([k for k in r if k != "mlab"] == REPORT_FIELDS for r in by_run.values())
    gold = by_run["a-gold"]
    assert gold["score"] == 0.95 and gold["gold_medal"] and gold["any_medal"] and not gold["silver_medal"]
    assert (gold["gold_threshold"], gold["silver_threshold"], gold["bronze_threshold"], gold["median_threshold"]) \
        == (1.0, 2.0, 3.0, 4.0)
    assert gold["competition_id"] == "tiny" and gold["is_lower_better"] is True
    assert gold["submission_path"] == str((graded / run_id("a-gold") / "workspace" / "submission.csv").resolve())
    assert datetime.fromisoformat(gold["created_at"]).tzinfo is not None
    assert {run: r["mlab"]["medal"] for run, r in by_run.items()} == {
        "a-gold": "gold", "b-bronze": "bronze", "c-silver": "silver", "d-none": None, "e-median": None,
        "f-nothing": None}
    assert [run for run, r in by_run.items() if r["above_median"]] == ["a-gold", "b-bronze", "c-silver", "d-none"]
    nothing = by_run["f-nothing"]
    assert nothing["score"] is None and not nothing["submission_exists"] and not nothing["valid_submission"]
    assert report["mlab"]["skipped"] == [{"run": str(graded / run_id("g-no-thresholds")), "task": "tiny",
                                          "reason": "task `tiny` declares no thresholds (thresholds "
                                                    "{ gold .. silver .. bronze .. }) and no leaderboard file "
                                                    '(leaderboard "FILE.csv" source "...")'}]
    assert err.strip() == f"skipped {graded / run_id('g-no-thresholds')}: task `tiny` declares no thresholds " \
                          '(thresholds { gold .. silver .. bronze .. }) and no leaderboard file ' \
                          '(leaderboard "FILE.csv" source "...")'


def test_written_to_a_new_file_never_over_one(graded, tmp_path):
    target = tmp_path / "grading_report.json"
    code, out, _ = mlab("export", graded / run_id("a-gold"), graded / run_id("c-silver"), "--to", "mle-bench", "-o", target)
    assert code == 0
    assert out.strip() == f"wrote {target}: MLE-bench grading report of 2 run(s), 2 medal(s) (1 gold, 1 silver, 0 bronze)"
    assert json.loads(target.read_text())["total_medals"] == 2
    code, _, err = mlab("export", graded / run_id("a-gold"), "--to", "mle-bench", "-o", target)
    assert code == 2 and "already exists" in err


def test_runs_that_cannot_be_graded_are_a_clear_error(graded):
    code, out, err = mlab("export", graded / run_id("g-no-thresholds"), "--to", "mle-bench")
    assert code == 2 and out == "" and "Traceback" not in err
    assert "no run can be graded for MLE-bench" in err and "declares no thresholds" in err


def test_runs_of_different_task_versions_are_not_pooled(graded):
    _copy(graded, "h-version-2", 1.5, version=2)
    code, _, err = mlab("export", graded, "--to", "mle-bench")
    assert code == 2 and "different versions or data variants" in err and run_id("h-version-2") in err
