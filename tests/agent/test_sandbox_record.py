"""Whether a run's scripts ran in the sandbox is recorded in run.json and result.json, and the run's
final lines, `mlab eval`, `mlab view` and `mlab report` flag the runs that ran without it."""
import json

from agent_helpers import mlab, only_run, result


def test_a_run_without_the_sandbox_says_so_in_its_files_and_its_report(tiny_task, tmp_path, monkeypatch):
    monkeypatch.setenv("MLAB_NO_SANDBOX", "1")
    code, out, err = mlab("run", tiny_task, "--model", "mlab/demo", "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    run_dir = only_run(tmp_path / "runs")
    final = out.splitlines()[-6:]  # the summary after the run, beside its score and its result file
    assert any(line.startswith("NOT SANDBOXED: ") and "MLAB_NO_SANDBOX" in line and "the answers included" in line
               for line in final), out
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["schema_version"] == 7
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
    code, out, err = mlab("eval", tmp_path / "runs")
    assert code == 0, err
    header, row = out.splitlines()[:2]
    assert header.split()[-1] == "sandbox" and row.split()[-1] == "NO"
    assert f"NOT SANDBOXED: 1 run(s) ran scripts without the sandbox (sandbox NO)" in out and run_dir.name in out
    code, out, err = mlab("view", run_dir)
    assert code == 0, err
    page = (run_dir / "view.html").read_text()
    assert "NOT SANDBOXED: " in page and "MLAB_NO_SANDBOX" in page
    code, out, err = mlab("view", tmp_path / "runs")
    assert code == 0, err
    assert "NOT SANDBOXED: 1 run(s)" in (tmp_path / "runs" / "index.html").read_text()
