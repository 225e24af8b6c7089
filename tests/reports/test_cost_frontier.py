"""The cost–score frontier, score per dollar and the field's figures in `mlab report` and
`mlab eval`, against values worked out by hand; an unpriced run's cost is "unknown price"."""
from __future__ import annotations

import csv
import json

import pandas as pd
import pytest

from report_helpers import mlab
from mlab.reports import cost
from mlab.reports.runs import BUILD_DOCUMENTS
from test_report_golden import make_runs


def pairs(*rows) -> pd.DataFrame:
    """Evaluation rows: (agent, cost or None, success) on one task."""
    return pd.DataFrame([{"data_variant": "lite", "task": "t", "agent": a, "model": "m", "cost": c,
                          "success_value": float(s), "task_error": False} for a, c, s in rows])


def test_the_pareto_set_of_a_fixture_with_a_known_frontier():
    """A: $1, 50%; B: $2, 100%; C: $3, 50% (A is cheaper and as good); D: unknown price, 100%;
    E: $0.50, 0% (the cheapest). Pareto set: A, B, E; D is listed, not placed."""
    frame = pairs(("A", 1.0, 1), ("A", 1.0, 0), ("B", 2.0, 1), ("B", 2.0, 1), ("C", 3.0, 1), ("C", 3.0, 0),
                  ("D", None, 1), ("D", 0.4, 1), ("E", 0.5, 0), ("E", 0.5, 0))
    table = cost.frontier_table(frame).set_index("agent")
    assert table["pareto"].to_dict() == {"A": True, "B": True, "C": False, "D": False, "E": True}
    assert table.loc["A", "score_per_dollar"] == pytest.approx(0.5)
    assert table.loc["B", "success_per_dollar"] == pytest.approx(0.5)
    assert table.loc["C", "score_per_dollar"] == pytest.approx(0.5 / 3)
    assert not table.loc["D", "cost_known"] and pd.isna(table.loc["D", "cost"])  # not $0
    assert cost.cost_cell(table.loc["D"]) == "unknown price (1 of 2 runs unpriced)"
    assert cost.per_dollar_cell("score_per_dollar")(table.loc["D"]) == "unknown price"
    assert cost.unknown_pairs(table.reset_index()) == ["D · m"]
    assert cost.pareto([1, 1, 2], [0.5, 0.5, 0.4]) == [True, True, False]  # equal points both stay


REFERENCES = {"points": [{"label": "expert", "value": 1.2154, "source": "hand"},
                         {"label": "best_human", "value": 0.2154, "source": "hand"}],
              "thresholds": {"gold": 2.5, "silver": 3.0, "bronze": 4.0, "source": "hand"}}


@pytest.fixture
def priced_runs(tmp_path):
    """The golden runs (two agents × six runs of the tiny task, baseline MAE 5.2154) with reference
    points in their task and costs: $0.02 a run for `research`, one unpriced run for `research-b`."""
    from ruamel.yaml import YAML

    runs = make_runs(tmp_path / "runs")
    for index, run in enumerate(sorted(p for p in runs.iterdir() if p.is_dir())):
        task = run / "build" / "tasks" / "tiny" / "task.yaml"
        doc = YAML(typ="safe").load(task.read_text())
        doc["references"] = REFERENCES
        with open(task, "w") as handle:
            YAML(typ="safe").dump(doc, handle)
        result = json.loads((run / "result.json").read_text())
        result["cost"] = None if index == 7 else 0.02
        (run / "result.json").write_text(json.dumps(result))
    BUILD_DOCUMENTS.clear()  # the template's build digest is shared: read the changed task.yaml
    yield runs
    BUILD_DOCUMENTS.clear()


# scores of each agent's six runs: 2.06924, 4.95, 5.11, none, 3.6, none; normalised (5.2154 - s) / 4
NORMALISED = [3.14616 / 4, 0.2654 / 4, 0.1054 / 4, 0.0, 1.6154 / 4, 0.0]


def test_the_report_shows_the_field_figures_and_unknown_prices(priced_runs, tmp_path):
    from mlab.reports.render import write_report

    report = write_report(priced_runs, tmp_path / "report")
    text = (report.folder / "report.md").read_text()
    mean = sum(NORMALISED) / 6  # 0.2138
    assert f"| lite | tiny | research | mlab/scripted | 6 | {mean:.3f} [" in text
    gap = 100 * sum((5.2154 - s) / 5.0 for s in (2.06924, 4.95, 5.11, 5.2154, 3.6, 5.2154)) / 6
    assert f"{gap:.1f}% [" in text
    # medals: 2.06924 is gold (<= 2.5), 3.6 bronze (<= 4.0): 2 of 6 runs
    assert "| lite | tiny | research | mlab/scripted | 6 | 1 | 0 | 1 | 33.3% [" in text
    frontier = pd.read_csv(report.folder / "cost_frontier.csv").set_index("agent")
    assert frontier.loc["research", "figure"] == "normalised score"
    assert frontier.loc["research", "score_per_dollar"] == pytest.approx(mean / 0.02, rel=1e-3)
    assert frontier.loc["research", "pareto"] and not frontier.loc["research-b", "pareto"]
    assert "| research-b | mlab/scripted | 6 | normalised score |" in text
    assert text.count("unknown price (1 of 6 runs unpriced)") == 2  # efficiency and frontier tables
    assert "cost is unknown for research-b · mlab/scripted" in text
    assert (report.folder / "cost_frontier.png").stat().st_size > 10_000
    assert "![cost frontier](cost_frontier.png)" in text


def test_eval_csv_has_every_figure_as_a_column(priced_runs, tmp_path):
    output = tmp_path / "rows.csv"
    code, out, err = mlab("eval", priced_runs, "-o", output)
    assert code == 0, err
    assert "unknown price" in out  # the unpriced run's cost in the terminal table
    with open(output, newline="") as handle:
        rows = list(csv.DictReader(handle))
    for column in ("normalised_score", "gap_closed", "medal", "percentile", "cost", "cost_known",
                   "normalised_per_dollar", "success_per_dollar"):
        assert column in rows[0]
    first = rows[0]  # score 2.06924, success, $0.02
    assert float(first["normalised_score"]) == pytest.approx(NORMALISED[0])
    assert float(first["gap_closed"]) == pytest.approx(100 * (5.2154 - 2.06924) / 5.0)
    assert first["medal"] == "gold" and first["cost_known"] == "True"
    assert float(first["normalised_per_dollar"]) == pytest.approx(NORMALISED[0] / 0.02)
    assert float(first["success_per_dollar"]) == pytest.approx(1 / 0.02)
    assert rows[3]["medal"] == "" and float(rows[3]["normalised_score"]) == 0.0  # no submission: the start
    unpriced = rows[7]
    assert unpriced["cost"] == "" and unpriced["cost_known"] == "False" and unpriced["normalised_per_dollar"] == ""


def test_budget_score_columns_of_some_rows_become_columns_of_every_row(tmp_path):
    from mlab.cli.eval import csv_columns, write_rows_csv

    rows = [{"run_id": "a", "score_at_time=1h": 0.5}, {"run_id": "b", "score_at_cost=$1": 0.7}]
    assert csv_columns(rows) == ["run_id", "score_at_time=1h", "score_at_cost=$1"]
    write_rows_csv(rows, tmp_path / "x.csv")
    assert (tmp_path / "x.csv").read_text().splitlines() == ["run_id,score_at_time=1h,score_at_cost=$1",
                                                             "a,0.5,", "b,,0.7"]


def test_the_frontier_plot_draws_each_pair_rings_the_pareto_set_and_names_the_unpriced(tmp_path):
    """The fixture above drawn: success rate (%) against cost per run, A, B and E ringed and joined
    by the frontier line in order of cost, D (unknown price) named beside the panel, not placed."""
    from unittest import mock

    from matplotlib.collections import PathCollection
    from matplotlib.container import ErrorbarContainer
    from matplotlib.figure import Figure

    frame = pairs(("A", 1.0, 1), ("A", 1.0, 0), ("B", 2.0, 1), ("B", 2.0, 1), ("C", 3.0, 1), ("C", 3.0, 0),
                  ("D", None, 1), ("D", 0.4, 1), ("E", 0.5, 0), ("E", 0.5, 0))
    drawn = []
    with mock.patch.object(Figure, "savefig", lambda figure, *a, **k: drawn.append(figure)):
        cost.frontier_plot(cost.frontier_table(frame), tmp_path / "cost_frontier.png")
    (axis,) = drawn[0].axes
    placed = {c.get_label().split(" · ")[0]: tuple(c.lines[0].get_xydata()[0]) for c in axis.containers
              if isinstance(c, ErrorbarContainer)}
    assert placed == {"A": (1.0, 50.0), "B": (2.0, 100.0), "C": (3.0, 50.0), "E": (0.5, 0.0)}
    rings = sorted(tuple(float(v) for v in point) for c in axis.collections if isinstance(c, PathCollection)
                   for point in c.get_offsets())
    assert rings == [(0.5, 0.0), (1.0, 50.0), (2.0, 100.0)]
    (front,) = [line for line in axis.get_lines() if line.get_label() == "Pareto frontier"]
    assert list(front.get_xdata()) == [0.5, 1.0, 2.0] and list(front.get_ydata()) == [0.0, 50.0, 100.0]
    assert any("D · m" in text.get_text() and "unknown price" in text.get_text() for text in axis.texts)


def test_medals_are_compared_in_pairs_on_shared_seeds():
    """A earns a medal on seeds 0, 1, 3 (0.5 gold, 2.5 bronze, 1.5 silver), B on seeds 1, 2 (2.5
    bronze, 0.8 gold): per seed A − B = 1, 0, −1, 1, a mean of +25 points; A wins 2, B 1."""
    from mlab.reports import figures

    references = {"t": {"thresholds": {"gold": 1.0, "silver": 2.0, "bronze": 3.0}}}
    frame = pd.DataFrame([{"data_variant": "lite", "task": "t", "agent": agent, "model": "m", "seed": seed,
                           "final_score": score, "baseline": 6.0, "direction": "lower_is_better",
                           "task_error": False, "success_value": 0.0, "cost": 0.0}
                          for agent, scores in (("A", (0.5, 2.5, 4.0, 1.5)), ("B", (3.5, 2.5, 0.8, 5.0)))
                          for seed, score in enumerate(scores)])
    tables, _, _ = figures.field_tables(frame, references, seed=0)
    (medal,) = [table for table in tables if table.name == "paired_any_medal"]
    (row,) = medal.frame.to_dict("records")
    assert (row["first"], row["second"], row["pairs"]) == ("A / m", "B / m", 4)
    assert row["difference"] == pytest.approx(0.25) and (row["first_wins"], row["second_wins"]) == (2, 1)
    assert dict(medal.columns)["difference [95% CI]"](pd.Series(row)).startswith("25.0% [")
