"""Medals and percentiles from a task's leaderboard file, against values worked out by hand: a
10-entry leaderboard in both directions, Kaggle's places by the number of teams, and the report,
`mlab eval -o FILE.csv` and `mlab export --to mle-bench` of runs whose build embeds a leaderboard."""
from __future__ import annotations

import csv
import json

import pytest

from report_helpers import mlab
from mlab.reports import medals
from mlab.reports.runs import BUILD_DOCUMENTS
from test_report_golden import make_runs

# an error (lower is better), best first: gold is place 1, silver 2, bronze 4 of 10 teams
ERRORS = [0.10, 0.12, 0.15, 0.18, 0.20, 0.22, 0.25, 0.30, 0.35, 0.40]
# an accuracy (higher is better), best first
ACCURACIES = [0.95, 0.93, 0.90, 0.88, 0.85, 0.80, 0.78, 0.75, 0.70, 0.60]


def test_thresholds_of_a_ten_team_leaderboard_in_both_directions():
    assert medals.leaderboard_thresholds(ERRORS, True) == pytest.approx(
        {"gold": 0.10, "silver": 0.12, "bronze": 0.18, "median": 0.21})
    assert medals.leaderboard_thresholds(ACCURACIES, False) == pytest.approx(
        {"gold": 0.95, "silver": 0.93, "bronze": 0.88, "median": 0.825})
    # the file's order does not matter: the scores are ranked in the metric's direction
    assert medals.leaderboard_thresholds(list(reversed(ERRORS)), True)["bronze"] == pytest.approx(0.18)


@pytest.mark.parametrize("score, medal, placed", [(0.05, "gold", 100.0), (0.12, "silver", 85.0),
                                                  (0.19, None, 60.0), (0.21, None, 50.0), (0.5, None, 0.0)])
def test_medal_and_percentile_of_known_scores_lower_is_better(score, medal, placed):
    thresholds = medals.leaderboard_thresholds(ERRORS, True)
    assert medals.medal(score, thresholds, True) == medal
    assert medals.percentile(score, ERRORS, True) == pytest.approx(placed)


@pytest.mark.parametrize("score, medal, placed", [(0.97, "gold", 100.0), (0.90, "bronze", 75.0),
                                                  (0.89, "bronze", 70.0), (0.86, None, 60.0), (0.5, None, 0.0)])
def test_medal_and_percentile_of_known_scores_higher_is_better(score, medal, placed):
    thresholds = medals.leaderboard_thresholds(ACCURACIES, False)
    assert medals.medal(score, thresholds, False) == medal
    assert medals.percentile(score, ACCURACIES, False) == pytest.approx(placed)


@pytest.mark.parametrize("teams, places", [
    (10, (1, 2, 4)), (5, (1, 1, 2)), (99, (9, 19, 39)),  # under 100: 10%, 20%, 40%, rounded down, at least 1
    (100, (10, 20, 40)), (249, (10, 49, 99)),  # 100 to 249: the top 10 teams for gold
    (250, (10, 50, 100)), (999, (11, 50, 100)),  # 250 to 999: 10 + 0.2% of N, 50, 100
    (1000, (12, 50, 100)), (4321, (18, 216, 432))])  # 1000 and more: 10 + 0.2% of N, 5%, 10%
def test_medal_places_follow_kaggles_rule_by_the_number_of_teams(teams, places):
    assert tuple(medals.medal_places(teams)[name] for name in medals.MEDALS) == places


def test_declared_thresholds_win_over_the_leaderboard():
    from mlab.documents.task import References

    board = {"leaderboard": {"file": "lb.csv", "column": "score", "source": "Kaggle", "scores": ERRORS}}
    assert medals.task_thresholds(References.of(board), True) == (
        pytest.approx(medals.leaderboard_thresholds(ERRORS, True)), "leaderboard")
    declared = {**board, "thresholds": {"gold": 0.3, "silver": 0.4, "source": "a paper"}}
    assert medals.task_thresholds(References.of(declared), True) == ({"gold": 0.3, "silver": 0.4}, "declared")
    assert medals.task_thresholds(References.of({"points": [], "thresholds": None}), True) == ({}, None)
    assert medals.task_thresholds(None, True) == ({}, None)


# the golden runs: the tiny task (mae), each agent's six runs score 2.06924, 4.95, 5.11, none, 3.6, none
BOARD = [1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5]  # gold 1.0, silver 1.5, bronze 2.5, median 3.25
PERCENTILES = [70.0, 20.0, 10.0, None, 40.0, None]


@pytest.fixture
def board_runs(tmp_path):
    """The golden runs with a leaderboard (and no thresholds) embedded in their task's build copy."""
    from ruamel.yaml import YAML

    runs = make_runs(tmp_path / "runs")
    for run in sorted(p for p in runs.iterdir() if p.is_dir()):
        task = run / "build" / "tasks" / "tiny" / "task.yaml"
        doc = YAML(typ="safe").load(task.read_text())
        doc["references"] = {"points": [], "thresholds": None, "leaderboard": {
            "file": "leaderboard.csv", "column": "score", "source": "a leaderboard by hand", "scores": BOARD}}
        with open(task, "w") as handle:
            YAML(typ="safe").dump(doc, handle)
    BUILD_DOCUMENTS.clear()  # the template's build digest is shared: read the changed task.yaml
    yield runs
    BUILD_DOCUMENTS.clear()


def test_the_report_shows_medals_and_percentiles_from_the_leaderboard(board_runs, tmp_path):
    from mlab.reports.render import write_report

    text = (write_report(board_runs, tmp_path / "report").folder / "report.md").read_text()
    # 2.06924 is bronze (<= 2.5); percentiles 70, 20, 10, 0 (no submission), 40, 0: mean 23.3
    medal_row = "| lite | tiny | research | mlab/scripted | 6 | 0 | 0 | 1 | 16.7% ["
    row = next(line for line in text.splitlines() if line.startswith(medal_row))
    assert row.split("|")[-2].strip().startswith("23.3 [")
    assert "percentile [95% CI]" in text
    assert "Thresholds of tiny come from the task's leaderboard file" in text


def test_eval_csv_percentile_column_from_the_leaderboard(board_runs, tmp_path):
    output = tmp_path / "rows.csv"
    code, _, err = mlab("eval", board_runs, "-o", output)
    assert code == 0, err
    with open(output, newline="") as handle:
        rows = list(csv.DictReader(handle))
    research = [r for r in rows if r["agent"] == "research"]
    assert [float(r["percentile"]) if r["percentile"] else None for r in research] == PERCENTILES
    assert [r["medal"] for r in research] == ["bronze", "", "", "", "", ""]


def test_mle_bench_export_takes_thresholds_and_median_from_the_leaderboard(board_runs):
    code, out, err = mlab("export", board_runs, "--to", "mle-bench")
    assert code == 0, err
    report = json.loads(out)
    first = next(r for r in report["competition_reports"] if r["score"] == 2.06924)
    assert (first["gold_threshold"], first["silver_threshold"], first["bronze_threshold"],
            first["median_threshold"]) == (1.0, 1.5, 2.5, 3.25)
    assert first["bronze_medal"] and first["above_median"]
    assert first["mlab"]["thresholds_from"] == "leaderboard" and first["mlab"]["percentile"] == 70.0
    assert first["mlab"]["thresholds_source"] == "a leaderboard by hand"
    # above the median 3.25: 2.06924 only (3.6, 4.95, 5.11 are not), in each agent's six runs
    assert report["total_above_median"] == 2 and report["total_bronze_medals"] == 2
