"""An external agent whose environment does not install still ends as a run: result.json with the
failure mode `agent install failed`, pip's output under output/, one line naming the requirement,
exit code 1 (a failed run), and no environment half made in the cache. Offline: the requirements
are a path that does not exist and a name a local, empty index does not have."""
from __future__ import annotations

from pathlib import Path

import pytest

from agent_helpers import mlab, only_run, result, scripted, trace
from test_external_runs import build_with

ABSENT = '''
agent absent external {
  requires ["mlab-absent @ file:///nonexistent/mlab-absent"]
  command  "echo never runs"
}
agent unknown external {
  requires ["mlab-never-published==1.0"]
  command  "echo never runs"
}
'''


@pytest.fixture
def build(tmp_path, tiny_task, monkeypatch) -> Path:
    empty = tmp_path / "empty-index"
    empty.mkdir()
    # pip sees only an empty local index: nothing is fetched, nothing resolves
    for name, value in (("PIP_INDEX_URL", empty.as_uri()), ("PIP_EXTRA_INDEX_URL", ""), ("PIP_FIND_LINKS", ""),
                        ("PIP_CONFIG_FILE", "/dev/null"), ("PIP_CONSTRAINT", "")):
        monkeypatch.setenv(name, value)
    return build_with(tmp_path, tiny_task, ABSENT)


@pytest.mark.parametrize("agent, named, why", [
    ("absent", "mlab-absent @ file:///nonexistent/mlab-absent", "No such file or directory"),
    ("unknown", "mlab-never-published==1.0", "pip found no matching distribution")])
def test_a_failed_install_ends_as_a_scored_run(tmp_path, build, monkeypatch, agent, named, why):
    # an agent cache of its own: the session's may hold another worker's install under way
    agent_envs = tmp_path / "agent-envs"
    monkeypatch.setenv("MLAB_AGENT_ENVS", str(agent_envs))
    code, out, err = mlab("run", "tiny", "--build", build, "--agent", agent, "--model", scripted(tmp_path, []),
                          "--runs-dir", tmp_path / "runs")
    run = only_run(tmp_path / "runs")
    assert code == 1, err
    line = next(line for line in err.splitlines() if line.startswith("mlab: agent"))
    assert f"requirement {named!r} could not be installed" in line and why in line
    assert str(run / "output" / "agent-install.log") in line
    document = result(run)
    assert document["failure_mode"] == "agent install failed" and document["success"] is False
    assert document["end_reason"] == "agent_install_failed" and document["agent_kind"] == "external"
    assert document["model_calls"] == 0 and document["submitted"] is False
    assert named in document["detail"] and "output/agent-install.log" in document["detail"]
    assert f"detail: requirement {named!r}" in out
    log = (run / "output" / "agent-install.log").read_text()
    assert why in log or "ERROR" in log, "pip's own output is kept"
    records = trace(run)
    assert [r["end_reason"] for r in records] == ["agent_install_failed"]
    assert not (run / "workspace" / "problem.md").exists(), "the command never started"
    assert not list(Path(run).rglob("*.tmp")) and not list(agent_envs.glob("*.partial")), "nothing half-written"
    environments = [p for p in agent_envs.glob("*") if p.is_dir() and p.name != "wheels"]  # wheels: the wheelhouse
    assert all((p / ".mlab-ready").is_file() for p in environments), "no half-made environment is left"


def test_the_report_labels_the_run(tmp_path, build):
    from mlab.reports.runs import load_run
    from mlab.reports.taxonomy import failure_labels

    mlab("run", "tiny", "--build", build, "--agent", "unknown", "--model", scripted(tmp_path, []),
         "--runs-dir", tmp_path / "runs")
    [label] = failure_labels(load_run(only_run(tmp_path / "runs")))
    assert label.name == "agent install failed" and "mlab-never-published==1.0" in label.detail
