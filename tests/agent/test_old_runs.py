"""Runs written by the previous trace version (1) are still read: resumed, scored by `mlab eval`,
shown by `mlab view` and counted by `mlab report`.

data/runs-v1/ holds a run of the tiny task by the keyless demo model (List Files, Execute Script,
Final Answer) exactly as mlab 0.1.0 wrote it before trace records carried a schema version.
"""
import json
import shutil
import sys
from pathlib import Path

import pytest

from agent_helpers import mlab, result, trace, trace_problems

OLD_RUNS = Path(__file__).parent / "data" / "runs-v1"
OLD_RUN_ID = "20261201T182227-d6c232"


@pytest.fixture
def old_runs(tmp_path) -> Path:
    """A copy of the version-1 runs folder (the commands may write beside the runs)."""
    copy = tmp_path / "runs"
    shutil.copytree(OLD_RUNS, copy)
    meta_path = copy / OLD_RUN_ID / "run.json"
    meta = json.loads(meta_path.read_text())
    meta["python"] = sys.executable  # the interpreter of the machine that made it may not exist here
    meta_path.write_text(json.dumps(meta, indent=2))
    return copy


def test_the_fixture_is_a_version_1_run():
    records = trace(OLD_RUNS / OLD_RUN_ID)
    assert [r["action"] for r in records] == ["List Files", "Execute Script", "Final Answer"]
    assert all("schema_version" not in r for r in records)
    assert json.loads((OLD_RUNS / OLD_RUN_ID / "result.json").read_text())["schema_version"] == 1


def test_a_version_1_run_killed_after_its_first_step_resumes_and_is_scored(old_runs):
    from mlab.trace import repair_trace

    run_dir = old_runs / OLD_RUN_ID
    (run_dir / "result.json").unlink()
    repair_trace(run_dir / "trace.jsonl", keep=1)  # as if killed after step 1
    (run_dir / "trace.jsonl.torn").unlink()
    code, out, err = mlab("run", "--resume", run_dir)
    assert code in (0, 1), err
    assert "Traceback" not in out + err
    records = trace(run_dir)
    assert [r["action"] for r in records] == ["List Files", "Execute Script", "Final Answer"]
    assert "wrote 4 predictions" in records[1]["observation"]
    from mlab.trace import TRACE_VERSION

    assert [r.get("schema_version") for r in records] == [None, TRACE_VERSION, TRACE_VERSION]  # version 1, then what resume wrote
    assert trace_problems(run_dir) == []
    document = result(run_dir)
    assert (document["end_reason"], document["score"], document["steps"]) == ("final_answer", 8.5, 3)


def test_mlab_eval_scores_a_version_1_run(old_runs):
    code, out, err = mlab("eval", old_runs / OLD_RUN_ID)
    assert code == 0, err
    assert OLD_RUN_ID in out and "8.5" in out


def test_mlab_view_shows_a_version_1_run(old_runs, tmp_path):
    code, out, err = mlab("view", old_runs / OLD_RUN_ID, "--output", tmp_path / "page.html")
    assert code == 0, err
    page = (tmp_path / "page.html").read_text()
    assert "List Files" in page and "wrote 4 predictions" in page and "Final Answer" in page


def test_mlab_report_counts_a_version_1_run(old_runs, tmp_path):
    code, out, err = mlab("report", old_runs, "--output", tmp_path / "report")
    assert code == 0, err
    written = "".join(p.read_text() for p in (tmp_path / "report").rglob("*.md"))
    assert "tiny" in written and "research" in written
