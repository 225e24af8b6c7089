"""Each lite task passes its audit: the starter runs offline in the sandbox and reproduces the
recorded baseline (untimed metrics), no answers leak, scripts are confined, the prompt names
the submission, no cheap exploit (constants, ids, row order, duplicates) reaches the threshold. Each audit (and so each starter run) happens once per session."""
from __future__ import annotations

import pytest
from task_helpers import TASKS, TIMED, confinement_checkable

CONFINEMENT = "sandbox confines scripts"


@pytest.mark.parametrize("name", TASKS)
def test_lite_task_passes_its_audit(name, audit_of):
    report = audit_of(name)
    findings = report.findings
    if not confinement_checkable():  # without bubblewrap confinement cannot hold; the rest must (not in CI)
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


def test_audit_command_runs_the_audit_and_reports_each_check(capsys, suite_build, audit_of):
    """`mlab audit` itself, the real audit (its own starter run), against the session's report."""
    from mlab.cli import main

    code = main(["audit", "house-price", "--build", str(suite_build.dir)])
    lines = capsys.readouterr().out.splitlines()
    expected = audit_of("house-price")
    assert [line[6:] for line in lines if line.startswith("ok    ")] == expected.passed
    assert [line[6:] for line in lines if line.startswith("FAIL  ")] == expected.findings
    assert {"answers stay private", "baseline reproduces", "sandbox confines scripts"} <= set(expected.passed) \
        or not confinement_checkable()
    assert any(line.startswith("note  starter scored") for line in lines)
    assert lines[-1] == f"audit of house-price (lite) {'passes' if expected.ok else 'fails'}"[:len(lines[-1])]
    assert code == (0 if expected.ok else 1)


def test_a_missing_sandbox_fails_the_audit_tests_in_ci(monkeypatch):
    from mlab.sandbox import runner

    monkeypatch.setattr(runner, "sandbox_available", lambda: (False, "bubblewrap is not installed"))
    monkeypatch.delenv("CI", raising=False)
    assert confinement_checkable() is False
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI is set but the sandbox is unavailable"):
        confinement_checkable()
