"""A run folder: trace records, snapshots by content hash, checkout, limits, scripts, the driver CLI."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from mlabc.schemas import problems

from mlab.run.checkout import checkout
from mlab.cli import main
from mlab.errors import UsageError
from mlab.run.folder import Run, RunEnded
from mlab.snapshots import PREFIX
from mlab.trace import read_trace


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def objects_of(run) -> set[str]:
    """The stored objects (not the temporary files an open run's store keeps ready, `.in-`)."""
    return {p.parent.name + p.name for p in (run.dir / "objects").rglob("*") if p.is_file() and not p.name.startswith(PREFIX)}


def test_the_run_folder_and_run_json(new_run):
    run = new_run(seed=7, limits={"steps": 9})
    assert sorted(p.name for p in run.dir.iterdir() if p.name != ".lock") == ["build", "objects", "output", "private", "research_log.md",
                                                         "run.json", "trace.jsonl", "workspace"]
    meta = json.loads((run.dir / "run.json").read_text())
    assert problems("run", meta) == []
    assert (meta["task"], meta["agent"], meta["data"]["variant"], meta["seed"]) == ("house-price", "research", "lite", 7)
    assert meta["limits"]["steps"] == 9 and meta["limits"]["time"] == 1200  # lite variant overrides the task
    assert meta["limits"]["script_timeout"] == 300 and meta["limits"]["memory"] == 8 * 2 ** 30


def test_a_run_records_its_disk_limit_and_an_older_run_json_without_it_still_resumes(new_run):
    from mlab.limits import DEFAULT_DISK_BYTES
    from mlab.run.folder import Run

    run = new_run()
    meta = json.loads((run.dir / "run.json").read_text())
    assert meta["schema_version"] == 7 and meta["limits"]["disk"] == DEFAULT_DISK_BYTES == 20 * 2**30
    assert set(meta["sandbox"]) == {"sandboxed", "reason"}  # version 3: the sandbox state at creation
    assert run.scripts.policy(run.workspace.root).disk_bytes == DEFAULT_DISK_BYTES
    run.close()
    # A run made before the disk limit existed: version 1, no limits.disk.
    del meta["limits"]["disk"], meta["sandbox"]
    meta["schema_version"] = 1
    (run.dir / "run.json").write_text(json.dumps(meta))
    resumed = Run.resume(run.dir)
    try:
        assert resumed.limits.disk == DEFAULT_DISK_BYTES   # the default applies from now on
    finally:
        resumed.close()


def test_run_ids_sort_by_creation(new_run):
    first, second = new_run(), new_run()
    assert first.id != second.id and first.id[:15] <= second.id[:15]


def test_every_trace_record_matches_the_schema_and_is_on_disk_at_once(new_run, stand_in_sandbox):
    run = new_run()
    run.step("List Files", {"dir_path": "."})
    run.step("Write File", {"file_name": "a.py", "content": "print('hi')\n"})
    run.step("Execute Script", {"script_name": "a.py"})
    run.step("Nonsense", {})
    run.step("Final Answer", {"final_answer": "done"})
    records = read_trace(run.dir / "trace.jsonl").records
    assert [r["step"] for r in records] == [1, 2, 3, 4, 5]
    assert records == run.records
    for record in records:
        assert problems("trace", record) == [], record
    assert [r["status"] for r in records] == ["ok", "ok", "ok", "error", "final"]
    assert records[1]["resolved"] == {"action": "Write File", "primitive": "write_file",
                                      "input": {"file_name": "a.py", "content": "print('hi')\n"}}
    assert records[3]["resolved"] is None and records[4]["end_reason"] == "final_answer"
    assert records[2]["compute"]["wall_s"] > 0 and records[2]["compute"]["exit_code"] == 0
    assert records[2]["observation"].startswith("hi\n\nThe script ended with exit code 0")
    assert (run.dir / "output" / "step-0003.log").read_text() == "hi\n"
    assert run.compute_totals()["scripts"] == 1
    assert run.ended
    with pytest.raises(RunEnded, match="has ended \\(final_answer\\)"):
        run.step("List Files", {"dir_path": "."})


def test_snapshots_store_only_changed_files_once(new_run):
    run = new_run()
    before = objects_of(run)
    assert len(before) == 6  # four workspace files, CANARY.txt and the initial manifest
    run.step("List Files", {"dir_path": "."})
    assert objects_of(run) == before and run.records[-1]["snapshot"] == {"changed": {}, "removed": []}
    run.step("Write File", {"file_name": "a.py", "content": "x = 1\n"})
    delta = run.records[-1]["snapshot"]
    assert list(delta["changed"]) == ["a.py"] and delta["removed"] == []
    run.step("Write File", {"file_name": "b.py", "content": "x = 1\n"})  # same bytes: same object
    assert len(objects_of(run)) == len(before) + 1
    run.step("Undo Edit Script", {"script_name": "b.py"})
    assert run.records[-1]["snapshot"] == {"changed": {}, "removed": ["b.py"]}


def test_checkout_restores_any_step(new_run, tmp_path, capsys):
    run = new_run()
    states = [files_of(run.workspace.root)]
    for content in ["one\n", "two\n", "three\n"]:
        run.step("Write File", {"file_name": "notes/n.txt", "content": content})
        states.append(files_of(run.workspace.root))
    run.step("Undo Edit Script", {"script_name": "notes/n.txt"})
    states.append(files_of(run.workspace.root))
    for step, expected in enumerate(states):
        target = tmp_path / f"step{step}"
        checkout(run.dir, step, target)
        assert files_of(target) == expected, step
    assert main(["checkout", str(run.dir), "--step", "2", str(tmp_path / "cli")]) == 0
    assert (tmp_path / "cli" / "notes" / "n.txt").read_text() == "two\n"
    assert "checked out step 2" in capsys.readouterr().out
    with pytest.raises(UsageError, match="has steps 0 to 4"):
        checkout(run.dir, 9, tmp_path / "nine")
    with pytest.raises(UsageError, match="not an empty folder"):
        checkout(run.dir, 1, tmp_path / "cli")


def test_step_limit_gives_a_shutdown_notice_then_ends(new_run):
    run = new_run(limits={"steps": 2})
    run.step("List Files", {"dir_path": "."})
    run.step("List Files", {"dir_path": "."})
    notice = run.step("Write File", {"file_name": "late.txt", "content": "x"})
    assert notice.status == "shutdown" and "step limit (2 steps)" in notice.text and "Final Answer" in notice.text
    assert not (run.workspace.root / "late.txt").exists() and not run.ended
    last = run.step("List Files", {"dir_path": "."})
    assert last.status == "shutdown" and "ended without a final answer" in last.text
    assert run.ended and run.end_reason == "steps_limit"


def test_a_final_answer_is_accepted_after_the_limit(new_run):
    run = new_run(limits={"steps": 1})
    run.step("List Files", {"dir_path": "."})
    assert run.step("List Files", {"dir_path": "."}).status == "shutdown"
    assert run.step("Final Answer", {"final_answer": "done"}).status == "final"
    assert run.end_reason == "final_answer"


def test_time_limit_gives_the_shutdown_notice(new_run):
    run = new_run(limits={"time": 0.001})
    import time

    time.sleep(0.01)
    notice = run.step("List Files", {"dir_path": "."})
    assert notice.status == "shutdown" and "time limit" in notice.text


def test_a_script_that_changes_a_read_only_file_sees_it_put_back(new_run, stand_in_sandbox):
    run = new_run()
    original = (run.workspace.root / "train.csv").read_bytes()
    run.step("Write File", {"file_name": "spoil.py", "content": "open('train.csv', 'w').write('spoiled')\n"
                                                                "import os; os.remove('test.csv')\n"})
    observation = run.step("Execute Script", {"script_name": "spoil.py"})
    assert "read-only file(s) test.csv, train.csv were changed and have been put back" in observation.text \
        or "read-only file(s) train.csv, test.csv were changed and have been put back" in observation.text
    assert (run.workspace.root / "train.csv").read_bytes() == original
    assert (run.workspace.root / "test.csv").is_file()
    assert "train.csv" not in run.records[-1]["snapshot"]["changed"]


def test_a_failing_script_reports_its_status(new_run, stand_in_sandbox):
    run = new_run()
    run.step("Write File", {"file_name": "bad.py", "content": "raise SystemExit(3)\n"})
    observation = run.step("Execute Script", {"script_name": "bad.py"})
    assert "(the script printed nothing)" in observation.text and "exit code 3" in observation.text


def test_mlab_drive_runs_a_list_of_actions(house_build, mlab_env, tmp_path, capsys, stand_in_sandbox):
    actions = tmp_path / "actions.json"
    actions.write_text(json.dumps([{"action": "List Files", "input": {"dir_path": "."}},
                                   {"action": "Final Answer", "input": {"final_answer": "done"}},
                                   {"action": "List Files", "input": {"dir_path": "."}}]))
    code = main(["drive", "house-price", "--build", str(house_build), "--actions", str(actions),
                 "--runs-dir", str(tmp_path / "runs"), "--steps", "5", "--time", "10m"])
    out = capsys.readouterr().out
    assert code == 0 and "--- step 1: List Files [ok]" in out and "ended after 2 steps (final_answer)" in out
    run_dir = next((tmp_path / "runs").iterdir())
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["limits"]["steps"] == 5 and meta["limits"]["time"] == 600
    result = json.loads((run_dir / "result.json").read_text())  # an ended driven run is scored
    assert result["driven"] is True and result["demo"] is False and result["models"] == {}
    assert result["end_reason"] == "final_answer" and result["steps"] == 2 and "DRIVEN by `mlab drive`" in out


def test_mlab_drive_plays_a_demonstration_and_refuses_to_resume_a_scored_run(house_build, mlab_env, tmp_path,
                                                                             capsys, stand_in_sandbox):
    actions = tmp_path / "demo.json"
    actions.write_text(json.dumps({"format": "mlab-demonstration", "version": 2, "steps": [
        {"sections": {"thought": "look"}, "action": "List Files", "input": {"dir_path": "."}},
        {"action": "Final Answer", "input": {"final_answer": "done"}}]}))
    runs = tmp_path / "runs"
    assert main(["drive", "house-price", "--build", str(house_build), "--actions", str(actions),
                 "--runs-dir", str(runs), "--quiet"]) == 0
    run_dir = next(runs.iterdir())
    assert json.loads((run_dir / "result.json").read_text())["driven"] is True
    capsys.readouterr()
    assert main(["drive", "--resume", str(run_dir), "--actions", str(actions)]) == 2
    assert "is finished" in capsys.readouterr().err
    actions.write_text(json.dumps({"format": "mlab-demonstration", "version": 2, "steps": [{"input": {}}]}))
    assert main(["drive", "house-price", "--build", str(house_build), "--actions", str(actions),
                 "--runs-dir", str(runs)]) == 2
    assert "step 1 has no \"action\" name" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "code", "message"), [
    (["drive", "--actions", "missing.json"], 3, "no such actions file"),
    (["drive", "--actions", "ACTIONS"], 2, "name a TASK"),
    (["drive", "house-price", "--actions", "ACTIONS", "--time", "soon"], 2, "'soon' is not a duration"),
    (["drive", "house-price", "--actions", "BAD"], 2, "is not valid JSON"),
    (["drive", "house-price", "--actions", "ACTIONS", "--resume", "RUNS", "--agent", "x"], 2, "--resume continues"),
    (["checkout", "RUNS", "--step", "1", "out"], 1, "is not a run folder"),
    (["prepare", "house-price", "--data", "full"], 1, "not available offline"),
    (["frobnicate"], 2, "invalid choice"),
])
def test_cli_errors_are_one_clear_line_with_the_documented_code(args, code, message, tmp_path, capsys, mlab_env):
    actions, bad = tmp_path / "a.json", tmp_path / "bad.json"
    actions.write_text("[]")
    bad.write_text("[{")
    (tmp_path / "runs").mkdir()
    args = [a.replace("ACTIONS", str(actions)).replace("BAD", str(bad)).replace("RUNS", str(tmp_path / "runs"))
            for a in args]
    assert main(args) == code
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_mlab_help_does_not_import_heavy_libraries():
    import subprocess
    import sys

    code = ("import sys, mlab.cli\nmlab.cli.main(['--help'])\n"
            "print(sorted(m for m in ('pandas', 'sklearn', 'litellm', 'numpy') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert "drive" in done.stdout and "checkout" in done.stdout



def test_script_threads_follow_the_task_whatever_the_machine_has(monkeypatch):
    import os

    from mlab.run.script_env import thread_env

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3}, raising=False)  # as `taskset -c 3 mlab run`
    env = thread_env(2)
    assert {env[name] for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                   "LOKY_MAX_CPU_COUNT")} == {"2"}
    assert env["OMP_WAIT_POLICY"] == "PASSIVE"


def test_a_task_whose_answers_cannot_be_read_is_a_task_error_not_the_agents(new_run):
    from mlab.scoring.evaluate import evaluate

    run = new_run()
    (run.workspace.root / "submission.csv").write_text("Id,SalePrice\n1,100\n", encoding="utf-8")
    for answers in run.private_dir.iterdir():
        answers.write_bytes(b"\xff\xfe not a table")
    result = evaluate(run)
    assert result["failure_mode"] == "task error" and result["success"] is False
    assert "the task could not be scored" in result["detail"] and result["submitted"] is False


def test_mlab_and_mlabc_print_the_installed_version(capsys):
    from importlib.metadata import version

    from mlabc.cli import main as mlabc_main

    installed = version("mlab-harness")
    assert main(["--version"]) == 0 and capsys.readouterr().out == f"mlab {installed}\n"
    assert mlabc_main(["--version"]) == 0 and capsys.readouterr().out == f"mlabc {installed}\n"
