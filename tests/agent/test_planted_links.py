"""Issue 41: a link planted where the harness writes into a run folder or a workspace (by the agent,
or in a run folder from elsewhere) is replaced or refused, never written through: `mlab run --resume`,
the scoring at the end and `mlab eval` write only inside the run."""
from __future__ import annotations

import json
import os
from pathlib import Path

from agent_helpers import interrupted_after_first_step, mlab, research_reply, result, scripted, trace

REPLIES = [research_reply("Execute Script", {"script_name": "fit.py"}),
           research_reply("Final Answer", {"final_answer": "submitted"})]

# every file the harness writes into a run folder on resume, at the end, when it is scored again and viewed
PLANTED = [".lock", "research_log.md", "trace.jsonl.torn", "scores.jsonl", "result.json", "budgets.json",
           "lock.json.tmp", "workspace/CANARY.txt", "workspace/submission.csv", "output/step-0002.log", "view.html"]


def plant(run_dir: Path, outside: Path) -> dict[str, Path]:
    """A link at each of PLANTED to a file of its own outside the run (half of them existing)."""
    targets = {}
    for index, rel in enumerate(PLANTED):
        target = outside / f"target-{index}"
        if index % 2:
            target.write_text("the operator's own file\n")
        path = run_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() or path.is_symlink():
            path.unlink()
        path.symlink_to(target)
        targets[rel] = target
    return targets


def test_resume_scoring_and_eval_never_write_through_a_planted_link(tiny_task, tmp_path, monkeypatch):
    model = scripted(tmp_path, REPLIES)
    code, _, err = interrupted_after_first_step(monkeypatch, tiny_task, "--model", model, "--runs-dir", tmp_path / "runs")
    assert code == 130, err
    run_dir = next((tmp_path / "runs").iterdir())
    outside = tmp_path / "outside"
    outside.mkdir()
    targets = plant(run_dir, outside)
    before = {p.name: p.read_bytes() for p in outside.iterdir()}

    code, out, err = mlab("run", "--resume", run_dir)
    assert code == 0, out + err
    code, out, err = mlab("eval", run_dir, "--intermediate", "--at", "time=50%")
    assert code == 0, out + err
    code, out, err = mlab("view", run_dir)
    assert code == 0, out + err

    assert {p.name: p.read_bytes() for p in outside.iterdir()} == before, "nothing outside the run was written"
    for rel, target in targets.items():
        assert not (run_dir / rel).is_symlink() or os.readlink(run_dir / rel) == str(target)
    assert not (run_dir / "result.json").is_symlink() and result(run_dir)["steps"] == 2
    assert [r["action"] for r in trace(run_dir)] == ["Execute Script", "Final Answer"]
    assert json.loads((run_dir / "scores.jsonl").read_text().splitlines()[0])["step"] >= 0


def test_a_run_folder_whose_workspace_is_a_link_is_not_resumed(tiny_task, tmp_path, monkeypatch):
    """A run folder from elsewhere whose workspace/ links to a folder of the operator's: the resume,
    which restores the workspace (removing what the step did not hold), refuses it and says why."""
    model = scripted(tmp_path, REPLIES)
    code, _, err = interrupted_after_first_step(monkeypatch, tiny_task, "--model", model, "--runs-dir", tmp_path / "runs")
    assert code == 130, err
    run_dir = next((tmp_path / "runs").iterdir())
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("mine\n")
    os.rename(run_dir / "workspace", tmp_path / "workspace-aside")
    (run_dir / "workspace").symlink_to(home)
    code, out, err = mlab("run", "--resume", run_dir)
    assert code != 0 and "workspace is a symbolic link" in err and "cannot be continued" in err
    assert "Traceback" not in err
    assert [p.name for p in home.iterdir()] == ["notes.txt"] and (home / "notes.txt").read_text() == "mine\n"
