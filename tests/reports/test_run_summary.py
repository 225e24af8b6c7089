"""A finished run's summary.json (spec/summary.schema.json): written by the harness at the run's
end, it holds what reports take from the trace, so that the first report of a run reads no trace;
a run without one (made before summaries), or whose summary no longer describes it, is read from
its trace, with the same rows."""
from __future__ import annotations

import json
import shutil

import pytest

from mlab.reports.eval import evaluate_runs
from mlab.reports.render import write_report
from mlab.reports.runs import load_runs
from mlab.reports.summary import SUMMARY
from mlabc.schemas import problems

# scenarios whose findings differ: a success, a hallucinated claim, a crash, a format error, a limit
SCENARIOS = ("research-0", "claim", "crash", "format", "steps-limit", "react-1")


@pytest.fixture
def copies(runs_dir, tmp_path, monkeypatch):
    """The session's runs copied, reported with a new user cache (nothing remembered by a report)."""
    monkeypatch.setenv("MLAB_CACHE", str(tmp_path / "cache"))
    target = tmp_path / "runs"
    for name in SCENARIOS:
        shutil.copytree(runs_dir / name, target / name)
    return target


def rows(folder) -> dict[str, dict]:
    return {row["run_dir"].split("/")[-2]: {k: v for k, v in row.items() if k != "run_dir"}
            for row in evaluate_runs(load_runs([folder]))}


def no_trace_read(monkeypatch):
    def refuse(path):
        raise AssertionError(f"the trace {path} was read")

    monkeypatch.setattr("mlab.reports.runs.read_trace", refuse)


def summaries(folder):
    return sorted(folder.glob(f"*/*/{SUMMARY}"))


def test_every_finished_run_ends_with_a_summary_of_its_schema(runs_dir):
    found = summaries(runs_dir)
    assert len(found) == len(list(runs_dir.glob("*/*/result.json")))
    for path in found:
        assert problems("summary", json.loads(path.read_text())) == [], path


def test_the_first_report_of_a_run_reads_its_summary_not_its_trace(copies, tmp_path, monkeypatch):
    without = tmp_path / "without"
    shutil.copytree(copies, without)
    for path in summaries(without):
        path.unlink()
    from_traces = rows(without)   # a run made before summaries: its trace is read
    assert from_traces["claim"]["hallucinated_claims"] >= 1
    assert len({row["failure_labels"] for row in from_traces.values()}) == len(SCENARIOS)
    no_trace_read(monkeypatch)
    assert rows(copies) == from_traces
    write_report(copies, tmp_path / "report")
    assert (tmp_path / "report" / "report.md").is_file()


def forge(path, **changes):
    document = json.loads(path.read_text())
    document.update(changes)
    path.write_text(json.dumps(document))


@pytest.mark.parametrize("change", [
    {"claims": []},                                                    # plausible but made for another trace
    {"claims": [{"step": "one", "section": "x", "number": "1", "sentence": "x"}] * 9},   # a wrong shape
    {"nodes": [7]}, {"labels": "none"}, {"records": "many"},
    {"findings_version": 999}, {"schema_version": 2},
])
def test_a_summary_that_no_longer_describes_its_run_is_passed_over(copies, change, monkeypatch):
    truth = rows(copies)["claim"]
    path = next((copies / "claim").glob(f"*/{SUMMARY}"))
    forge(path, **change)
    if change == {"claims": []}:   # the trace was extended after the summary was made
        trace = path.parent / "trace.jsonl"
        trace.write_text(trace.read_text() + trace.read_text().splitlines()[-1] + "\n")
        truth = None
    got = rows(copies)["claim"]
    if truth is None:
        assert got["hallucinated_claims"] >= 1   # found in the trace, not taken from the summary
    else:
        assert got == truth


@pytest.mark.parametrize("change", [
    {"nodes": [{"node": 1.0}]}, {"nodes": [{"node": 1, "secret": "x"}]},
    {"claims": [{"step": 1.0, "section": "x", "number": "1", "sentence": "x"}]},
])
def test_a_summary_with_what_the_shared_checks_let_through_is_passed_over(copies, change):
    """A node or step 1.0 (an integer to JSON Schema) or a key no reader knows (which
    bounded_json.shape_problem does not look at): the summary's own check refuses them, and the
    run is read from its trace."""
    from mlab.reports.runs import load_run
    from mlab.reports.summary import read_summary

    path = next((copies / "claim").glob(f"*/{SUMMARY}"))
    assert read_summary(load_run(path.parent)) is not None
    forge(path, **change)
    assert read_summary(load_run(path.parent)) is None


def test_a_summary_is_passed_over_once_result_json_changes(copies):
    run = next((copies / "claim").glob("*/result.json")).parent
    forge(run / SUMMARY, labels=[{"name": "a label of another result", "detail": ""}])
    forge(run / SUMMARY, result_digest="0" * 64)
    assert "a label of another result" not in rows(copies)["claim"]["failure_labels"]


def test_a_summary_that_is_not_json_is_no_summary(copies, capsys):
    truth = rows(copies)
    for path in summaries(copies):
        path.write_bytes(b"\xff{not json")
    assert rows(copies) == truth
    assert "Traceback" not in capsys.readouterr().err


def test_a_released_runs_score_rows_read_as_the_rows_of_its_file(run_of):
    from mlab.reports.runs import load_run

    run = load_run(run_of("research-0"))
    rows = [dict(row) for row in run.scores]
    run.release()
    kept = run.scores
    assert [dict(row) for row in kept] == [{k: v for k, v in row.items() if k != "submission" and k != "problem"}
                                           for row in rows]
    assert kept[0] == dict(kept[0]) and kept[-1].get("score") == rows[-1]["score"]
    assert kept[-1]["tokens"] == rows[-1]["tokens"] and "problem" not in kept[-1] and kept[-1].get("problem") is None
    with pytest.raises(KeyError):
        kept[-1]["submission"]


def test_the_curves_read_the_same_columns_of_a_released_run_as_of_its_file(run_of, tmp_path):
    """A released run keeps its scores as columns (ScoreTable): the anytime curves take each field
    whole, and get what a row-by-row read of scores.jsonl gives, a missing field as None."""
    from mlab.reports.runs import load_run
    from mlab.reports.score_rows import SCORE_FIELDS, score_columns

    run_dir = tmp_path / "run"
    shutil.copytree(run_of("research-0"), run_dir, symlinks=True)
    lines = (run_dir / "scores.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    rows[1].pop("improvement")
    rows[-1]["success"] = None
    (run_dir / "scores.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    run = load_run(run_dir)
    run.release()
    columns = score_columns(run.scores)
    assert columns == {name: [row.get(name) for row in rows] for name in SCORE_FIELDS}
    assert columns["improvement"][1] is None and "improvement" not in run.scores[1]
    assert len(run.scores) == len(rows) and run.scores[-1] == run.scores[len(rows) - 1]
    assert [dict(row) for row in run.scores[1:3]] == [dict(run.scores[1]), dict(run.scores[2])]
    with pytest.raises(IndexError):
        run.scores[len(rows)]
