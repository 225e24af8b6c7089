"""Each lite task passes its audit: the starter runs offline in the sandbox and reproduces the
recorded baseline (untimed metrics), no answers leak, scripts are confined, the prompt names
the submission, no cheap exploit (constants, ids, row order, duplicates) reaches the threshold. Each audit (and so each starter run) happens once per session."""
from __future__ import annotations

import pytest
from task_helpers import TASKS, TIMED

from mlab.sandbox.runner import sandbox_available

CONFINEMENT = "sandbox confines scripts"


@pytest.mark.parametrize("name", TASKS)
def test_lite_task_passes_its_audit(name, audit_of):
    report = audit_of(name)
    findings = report.findings
    if not sandbox_available()[0]:  # without bubblewrap confinement cannot hold; the rest must
        findings = [f for f in findings if not f.startswith(CONFINEMENT)]
    assert findings == []
    assert {"answers stay private", "prompt names the submission", "baseline reproduces",
            "no cheap exploit succeeds"} <= set(report.passed)


@pytest.mark.parametrize("name", sorted(set(TASKS) - set(TIMED)))
def test_starter_scores_within_tolerance_of_the_recorded_baseline(name, audit_of, task_of):
    from mlab.scoring.baseline import recorded_baseline

    recorded = recorded_baseline(task_of(name), "lite")
    assert recorded is not None, "tasks/baselines.json has no entry with this code hash: run mlab baseline --record"
    note = next(n for n in audit_of(name).notes if n.startswith("starter scored"))
    measured = float(note.split()[2].rstrip(";"))
    assert measured == pytest.approx(recorded["value"], rel=0.02)


@pytest.mark.parametrize("name", TIMED)
def test_timed_starter_writes_the_expected_output(name, audit_of):
    assert any(n.startswith("timed metric: the starter ran") for n in audit_of(name).notes)


def test_audit_finds_an_answer_column_in_a_public_test_file(task_copy, tmp_path):
    from mlab.audit.leaks import leak_findings
    from mlab.data.prepare import prepare_data

    task = task_copy("house-price")
    done = prepare_data(task, "lite", cache_dir=tmp_path / "own-cache")  # changed below: not shared
    leaky = done.public / "test.csv"
    import pandas as pd

    test, answers = pd.read_csv(leaky), pd.read_csv(done.private / "answers.csv")
    test.merge(answers, on="Id").to_csv(leaky, index=False)
    found = leak_findings(task.variant("lite"), done.public, done.private)
    assert any("answer column(s) ['SalePrice']" in f for f in found)


def test_audit_finds_answers_hidden_under_another_name(task_copy, tmp_path):
    import pandas as pd

    from mlab.audit.leaks import leak_findings
    from mlab.data.prepare import prepare_data

    task = task_copy("spaceship-titanic")
    done = prepare_data(task, "lite", cache_dir=tmp_path / "own-cache")  # changed below: not shared
    answers = pd.read_csv(done.private / "answers.csv").rename(columns={"Transported": "Hint"})
    answers.to_csv(done.public / "extra.csv", index=False)
    found = leak_findings(task.variant("lite"), done.public, done.private)
    assert any("extra.csv column `Hint` equals the answers' `Transported`" in f for f in found)


def test_audit_finds_a_private_file_copied_to_the_public_side(task_copy, tmp_path):
    from mlab.audit.leaks import leak_findings
    from mlab.data.prepare import prepare_data

    task = task_copy("vectorization")
    done = prepare_data(task, "lite", cache_dir=tmp_path / "own-cache")  # changed below: not shared
    (done.public / "reference.npy").write_bytes((done.private / "expected_output.npy").read_bytes())
    found = leak_findings(task.variant("lite"), done.public, done.private)
    assert found == ["public reference.npy is a copy of the private expected_output.npy"]


def test_audit_command_reports_each_check(capsys, suite_build, audit_of, monkeypatch):
    from mlab.audit import checks as audit
    from mlab.cli import main

    monkeypatch.setattr(audit, "audit_task", lambda task, variant, python=None, agent=None: audit_of(task.name))
    code = main(["audit", "house-price", "--build", str(suite_build.dir)])
    out = capsys.readouterr().out
    assert "ok    answers stay private" in out and "audit of house-price (lite)" in out
    assert code == (0 if audit_of("house-price").ok else 1)
