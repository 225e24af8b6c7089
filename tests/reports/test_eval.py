"""`mlab eval`: per-run rows and the score of every step's snapshot."""
from __future__ import annotations

import csv
import json

import pytest

from report_helpers import mlab
from mlab.run.checkout import checkout
from mlab.scoring.metrics.tabular import improvement


def read_scores(run) -> list[dict]:
    return [json.loads(line) for line in (run / "scores.jsonl").read_text().splitlines()]


def test_every_step_is_scored_and_the_last_matches_the_result(run_of):
    run = run_of("research-0")
    scores, result = read_scores(run), json.loads((run / "result.json").read_text())
    trace = (run / "trace.jsonl").read_text().splitlines()
    assert [s["step"] for s in scores] == list(range(len(trace) + 1))
    assert scores[0]["score"] is None and scores[0]["problem"].startswith("no submission")
    assert scores[1]["score"] is None  # blend.py written, not run yet
    assert scores[-1]["score"] == pytest.approx(result["score"])
    assert scores[2]["improvement"] == pytest.approx(improvement(scores[2]["score"], result["baseline"]["value"],
                                                                 "lower_is_better"))
    assert [s["success"] for s in scores] == [False, False, True, True]
    assert scores[-1]["tokens"] == result["total_tokens"]


def test_a_step_score_is_the_score_of_its_checked_out_workspace(run_of, tmp_path):
    """Scoring only the submission file gives what scoring the whole restored workspace gives."""
    from mlab.build import load_build
    from mlab.scoring.score import score_workspace

    run = run_of("research-1")
    task = load_build(run / "build", check_fresh=False).task("tiny")
    checkout(run, 2, tmp_path / "step-2")
    whole = score_workspace(task, "lite", tmp_path / "step-2", run / "private")
    assert read_scores(run)[2]["score"] == pytest.approx(whole.value)


def test_a_submission_in_the_wrong_format_is_scored_as_none_with_the_reason(run_of):
    scores = read_scores(run_of("react-2"))
    assert scores[-1]["score"] is None and "lacks column(s) ['y']" in scores[-1]["problem"]


def test_rows_printed_and_written(run_of, tmp_path):
    output = tmp_path / "rows.csv"
    code, out, err = mlab("eval", run_of("research-1"), run_of("demo"), "-o", output)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:6] == ["run", "task", "data", "agent", "model", "seed"]
    assert "mlab/demo (demonstration)" in out and "DEMONSTRATIONS by the keyless demo model" in out
    assert f"wrote 2 row(s) to {output}" in out
    with open(output, newline="") as handle:
        rows = {row["agent"] + "/" + row["model"]: row for row in csv.DictReader(handle)}
    row = rows["research/mlab/scripted"]
    result = json.loads((run_of("research-1") / "result.json").read_text())
    assert float(row["final_score"]) == pytest.approx(result["score"])
    assert float(row["best_score"]) == pytest.approx(result["score"]) and row["best_step"] == "2"
    assert float(row["improvement"]) == pytest.approx(result["improvement"])
    assert row["success"] == "False" and row["failure_labels"] == "small improvement"
    assert int(row["prompt_tokens_main"]) == result["tokens"]["main"]["prompt"]
    assert row["model_main"].startswith("mlab/scripted:") and row["seed"] == "1"
    assert rows["research/mlab/demo (demonstration)"]["demo"] == "True"


def test_eval_without_intermediate_leaves_scores_alone(run_of):
    run = run_of("react-0")
    before = (run / "scores.jsonl").read_text()
    code, out, err = mlab("eval", run)
    assert code == 0 and (run / "scores.jsonl").read_text() == before


def test_eval_of_a_glob_passes_over_the_index_that_view_writes(runs_dir, tmp_path):
    folder = runs_dir / "react-0"
    code, out, err = mlab("view", folder)
    assert code == 0 and (folder / "index.html").is_file(), err
    code, out, err = mlab("eval", *sorted(folder.iterdir()))  # what the shell makes of runs/*
    assert code == 0, err
    assert len(out.splitlines()) == 2 and "react-0" not in err
