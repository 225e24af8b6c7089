"""Whether a run's scripts ran in the sandbox is recorded in run.json and result.json, and `mlab
report` flags the runs that ran without it."""
import json

from agent_helpers import mlab, only_run, result


def test_a_run_without_the_sandbox_says_so_in_its_files_and_its_report(tiny_task, tmp_path, monkeypatch):
    monkeypatch.setenv("MLAB_NO_SANDBOX", "1")
    code, _, err = mlab("run", tiny_task, "--model", "mlab/demo", "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    run_dir = only_run(tmp_path / "runs")
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["schema_version"] == 4
    assert meta["sandbox"] == {"sandboxed": False, "reason": "the sandbox is turned off by MLAB_NO_SANDBOX"}
    document = result(run_dir)
    assert document["schema_version"] == 5
    ran = document["sandbox"]["scripts"]
    assert ran >= 1 and document["sandbox"] == {"sandboxed": False, "scripts": ran, "unsandboxed_scripts": ran,
                                                "reason": "the sandbox is turned off by MLAB_NO_SANDBOX"}
    code, _, err = mlab("report", tmp_path / "runs", "-o", tmp_path / "report")
    assert code == 0, err
    text = (tmp_path / "report" / "report.md").read_text()
    assert "**1 run(s) ran scripts without the sandbox**" in text and run_dir.name in text
