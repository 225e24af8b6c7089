"""What a report takes from a run's trace (its findings, its record count) is remembered under the
trace's identity: a second report of an unchanged run reads no trace, and a changed trace is read
again (never an old finding for a new trace)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mlab.reports.eval import evaluate_runs
from mlab.reports.runs import load_runs

TEMPLATE = Path(__file__).parent / "data" / "golden-runs" / "template"


@pytest.fixture
def run_copy(tmp_path, monkeypatch):
    import mlab.cache as cache

    monkeypatch.setenv("MLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "SETTLED_S", -1.0)   # the copied files need not be two seconds old here
    run = tmp_path / "runs" / TEMPLATE.name
    shutil.copytree(TEMPLATE, run)
    return run


def rows(run: Path) -> list[dict]:
    return evaluate_runs(load_runs([run]))


def test_an_unchanged_run_is_reported_again_without_reading_its_trace(run_copy, monkeypatch):
    first = rows(run_copy)

    def no_trace(path):
        raise AssertionError(f"the trace {path} was read again")

    monkeypatch.setattr("mlab.reports.runs.read_trace", no_trace)
    assert rows(run_copy) == first


def test_a_changed_trace_is_read_again(run_copy):
    before = rows(run_copy)[0]
    assert before["hallucinated_claims"] == 0
    lines = (run_copy / "trace.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    record["model"]["reply"]["Fact Check"] = "The validation MAE is 1.23456 (confirmed by the run)."
    lines[0] = json.dumps(record)
    (run_copy / "trace.jsonl").write_text("\n".join(lines) + "\n")
    after = rows(run_copy)[0]
    assert after["hallucinated_claims"] == 1, after["failure_labels"]
