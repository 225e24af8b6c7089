"""A recorded baseline is reported as measured only while it reproduces: its provenance covers mlab's own
preparation code, so a changed preparation voids it and the starter is measured again."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mlab.data import prepare as prepare_module
from mlab.data.prepare import code_digest
from mlab.scoring import baseline as baseline_module
from mlab.scoring.baseline import recorded_baseline, recorded_entry

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def recorded_copy(task_copy):
    """house-price copied with the shipped record of its baseline beside it."""
    def with_record(root):
        shutil.copyfile(REPO / "tasks" / "baselines.json", root / "baselines.json")

    return task_copy("house-price", with_record)


SHIPPED = json.loads((REPO / "tasks" / "baselines.json").read_text())["baselines"]


@pytest.mark.parametrize("task, variant", [(task, variant) for task, entries in sorted(SHIPPED.items())
                                           for variant in sorted(entries)])
def test_every_shipped_record_holds_for_the_code_as_it_is(task, variant):
    # a stale record is measured again in every run (the suite's and a user's first run alike)
    from mlab.build import resolve_task

    recorded = recorded_baseline(resolve_task(task), variant)
    assert recorded is not None, f"tasks/baselines.json is stale for {task}: run `mlab baseline {task} --record`"
    assert recorded["measured"] is True


def test_a_changed_preparation_voids_the_record(recorded_copy, monkeypatch):
    assert recorded_baseline(recorded_copy, "lite") is not None
    monkeypatch.setattr(prepare_module, "preparation_code_digest", lambda: "0" * 64)  # mlab.data's code changed
    assert recorded_baseline(recorded_copy, "lite") is None  # measured again, never reported from the record
    assert recorded_entry(recorded_copy, "lite") is not None  # the record itself is still there to compare


def test_a_run_measures_the_starter_when_the_preparation_changed(recorded_copy, monkeypatch, tmp_path):
    from mlab.run.folder import Run

    monkeypatch.setattr(prepare_module, "preparation_code_digest", lambda: "0" * 64)
    measured = []
    monkeypatch.setattr(baseline_module, "run_starter",
                        lambda run, script: measured.append(script) or {"kind": "run", "script": script,
                                                                        "value": 1.0, "measured": True})
    monkeypatch.setenv("MLAB_CACHE", str(tmp_path / "cache"))
    run = Run.create(recorded_copy, recorded_copy.build.agent("research"), tmp_path / "runs")
    try:
        result = baseline_module.measure_baseline(run)
    finally:
        run.close()
    assert measured == ["train.py"] and "from" not in result  # the starter ran; the record was not used


def test_a_version_1_record_is_read_but_never_reported_as_measured(recorded_copy):
    path = recorded_copy.root / "baselines.json"
    document = json.loads(path.read_text())
    path.write_text(json.dumps({**document, "schema_version": 1}))
    assert recorded_entry(recorded_copy, "lite")["value"] == document["baselines"]["house-price"]["lite"]["value"]
    assert recorded_baseline(recorded_copy, "lite") is None


def test_the_code_digest_ignores_comments_and_docstrings_but_not_code(tmp_path):
    module = tmp_path / "splits.py"
    module.write_text('def cut(rows):\n    """Cut."""\n    return rows[:8]\n')
    first = code_digest(tmp_path)
    module.write_text('def cut(rows):\n    """Cut the rows, worded anew."""\n\n    return rows[:8]  # the first eight\n')
    assert code_digest(tmp_path) == first
    module.write_text('def cut(rows):\n    """Cut."""\n    return rows[:9]\n')
    assert code_digest(tmp_path) != first
