"""Killed runs resume from their trace: kill -9 at a random step, then the same trace and workspace
as a run that was never killed; a torn last line is set aside, never lost."""
from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mlabc.schemas import problems

from mlab.run.folder import Run
from mlab.trace import read_trace

from runtime_helpers import REPO

HERE = Path(__file__).resolve().parent
VOLATILE = ("started", "ended", "duration_s", "elapsed_s")

DRIVER = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
import stand_in_sandbox
from mlab.actions.scripts import use_script_runner
use_script_runner(stand_in_sandbox)  # deterministic script runs, whatever the machine has
from mlab.cli import main
sys.exit(main(sys.argv[1:]))
"""

SLOW_SCRIPT = "import time\ntime.sleep(0.15)\nprint('slept', open('notes.txt').read().strip())\n"


def scripted_actions() -> list[dict]:
    actions = [{"action": "Write File", "input": {"file_name": "slow.py", "content": SLOW_SCRIPT}}]
    for i in range(6):
        actions += [
            {"action": "Write File", "input": {"file_name": "notes.txt", "content": f"note {i}\n"}},
            {"action": "Append File", "input": {"file_name": f"log{i % 2}.txt", "content": f"line {i}\n"}},
            {"action": "Execute Script", "input": {"script_name": "slow.py"}},
            {"action": "Append Summary to Research Log", "input": {"content": f"step group {i}"}},
        ]
        if i % 2:
            actions += [{"action": "Undo Edit Script", "input": {"script_name": "notes.txt"}},
                        {"action": "Copy File", "input": {"source": "notes.txt", "destination": f"keep{i}.txt"}}]
    return actions + [{"action": "List Files", "input": {"dir_path": "."}},
                      {"action": "Final Answer", "input": {"final_answer": "done"}}]


def comparable(record: dict) -> dict:
    kept = {k: v for k, v in record.items() if k not in VOLATILE}
    if kept["compute"]:
        kept["compute"] = {"exit_code": kept["compute"]["exit_code"]}
    kept["observation"] = re.sub(r"\d+\.\d+ s", "T s", kept["observation"])
    kept["observation"] = re.sub(r"peak memory \d+ MiB", "peak memory M MiB", kept["observation"])  # measured
    return kept


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def driver(tmp_path, house_build, mlab_env):
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    actions = tmp_path / "actions.json"
    actions.write_text(json.dumps(scripted_actions()))
    env = dict(os.environ, MLAB_CACHE=str(mlab_env), PYTHONPATH=str(REPO))

    def command(*args: str) -> list[str]:
        return [sys.executable, str(script), "drive", *args, "--actions", str(actions), "--quiet"]

    def start_new(runs_dir: Path) -> subprocess.Popen:
        return subprocess.Popen(command("house-price", "--build", str(house_build), "--runs-dir", str(runs_dir),
                                        "--steps", "100"),
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def resume(run_dir: Path) -> subprocess.CompletedProcess:
        return subprocess.run(command("--resume", str(run_dir)), env=env, capture_output=True, text=True,
                              timeout=120)

    return start_new, resume


def trace_lines(run_dir: Path) -> int:
    try:
        return (run_dir / "trace.jsonl").read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def test_kill_9_at_a_random_step_then_resume_equals_an_unkilled_run(driver, tmp_path):
    start_new, resume = driver
    reference = start_new(tmp_path / "reference")
    assert reference.wait(timeout=120) == 0, reference.stderr.read().decode()
    reference_dir = next((tmp_path / "reference").iterdir())

    seed = int.from_bytes(os.urandom(4), "little")
    chance = random.Random(seed)
    total = len(scripted_actions())
    kill_after = chance.randrange(1, total - 2)
    runs_dir = tmp_path / "killed"
    victim = start_new(runs_dir)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and victim.poll() is None:
        folders = list(runs_dir.iterdir()) if runs_dir.is_dir() else []
        if folders and trace_lines(folders[0]) >= kill_after:
            time.sleep(chance.uniform(0, 0.2))  # land anywhere: inside a step or between two
            break
        time.sleep(0.005)
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=30)
    killed_dir = next(runs_dir.iterdir())
    done = resume(killed_dir)
    assert done.returncode == 0, (seed, done.stderr)

    expected = [comparable(r) for r in read_trace(reference_dir / "trace.jsonl").records]
    got = [comparable(r) for r in read_trace(killed_dir / "trace.jsonl").records]
    assert len(got) == total, seed
    assert got == expected, f"seed {seed}, killed after {kill_after} records"
    assert files_of(killed_dir / "workspace") == files_of(reference_dir / "workspace"), seed
    assert (killed_dir / "research_log.md").read_text() == (reference_dir / "research_log.md").read_text()
    assert (killed_dir / "trace.jsonl").read_bytes().endswith(b"\n")


def test_a_torn_last_line_is_set_aside_and_the_run_goes_on(new_run):
    run = new_run()
    run.step("Write File", {"file_name": "a.txt", "content": "kept\n"})
    run.step("Write File", {"file_name": "a.txt", "content": "lost\n"})
    run.close()
    trace = run.dir / "trace.jsonl"
    lines = trace.read_bytes().splitlines(keepends=True)
    torn = lines[1][: len(lines[1]) // 2]
    trace.write_bytes(lines[0] + torn)  # as if killed while the second record was being written

    resumed = Run.resume(run.dir)
    assert resumed.steps_taken == 1
    assert (resumed.workspace.root / "a.txt").read_text() == "kept\n"
    assert (run.dir / "trace.jsonl.torn").read_bytes() == torn
    resumed.step("Undo Edit Script", {"script_name": "a.txt"})
    assert not (resumed.workspace.root / "a.txt").exists()  # the undo history was rebuilt too
    assert [r["step"] for r in read_trace(trace).records] == [1, 2]
    resumed.close()


def test_resume_restores_the_workspace_of_the_last_recorded_step(new_run):
    run = new_run()
    run.step("Write File", {"file_name": "a.txt", "content": "recorded\n"})
    run.close()
    (run.workspace.root / "a.txt").write_text("changed after the last record\n")
    (run.workspace.root / "stray.txt").write_text("not recorded\n")
    (run.workspace.root / "train.py").unlink()
    resumed = Run.resume(run.dir)
    assert (resumed.workspace.root / "a.txt").read_text() == "recorded\n"
    assert not (resumed.workspace.root / "stray.txt").exists()
    assert (resumed.workspace.root / "train.py").is_file()
    resumed.close()


def test_an_ended_run_stays_ended_when_resumed(new_run):
    run = new_run()
    run.step("Final Answer", {"final_answer": "done"})
    run.close()
    resumed = Run.resume(run.dir)
    assert resumed.ended and resumed.end_reason == "final_answer"
    resumed.close()


def test_a_record_whose_objects_a_crash_lost_is_set_aside(new_run):
    run = new_run()
    run.step("Write File", {"file_name": "a.txt", "content": "first\n"})
    run.step("Write File", {"file_name": "a.txt", "content": "second\n"})
    run.close()
    lost = run.records[-1]["snapshot"]["changed"]["a.txt"]
    run.store.path(lost).write_bytes(b"")  # as after a power cut: the name exists, the data does not
    resumed = Run.resume(run.dir)
    assert resumed.steps_taken == 1
    assert (resumed.workspace.root / "a.txt").read_text() == "first\n"
    assert b'"step":2' in (run.dir / "trace.jsonl.torn").read_bytes()
    resumed.close()


def test_finish_ends_a_run_with_a_record_saying_why(new_run):
    run = new_run()
    run.step("List Files", {"dir_path": "."})
    run.research_log.append("a summary written after step 1")
    run.finish("tokens_limit", detail="the run's tokens limit was reached", model={"calls": []})
    assert run.ended and run.end_reason == "tokens_limit"
    record = run.records[-1]
    assert (record["step"], record["action"], record["status"]) == (2, None, "ended")
    assert record["observation"] == "the run's tokens limit was reached"
    assert record["research_log"] == "a summary written after step 1\n"
    assert problems("trace", record) == []
    run.finish("again")  # an ended run stays as it ended
    assert run.end_reason == "tokens_limit" and run.steps_taken == 2
    run.close()
    resumed = Run.resume(run.dir)
    assert resumed.ended and resumed.end_reason == "tokens_limit"
    resumed.close()


def test_a_run_driven_by_one_process_cannot_be_resumed_by_another(new_run):
    from mlab.errors import RunError

    run = new_run()
    with pytest.raises(RunError, match="being driven by another process"):
        Run.resume(run.dir)
    run.close()
    Run.resume(run.dir).close()


# --- a run killed while its folder is being made (issue 25) --------------------------------

CREATION_POINTS = ["install_starter", "install_run_data", "_copy_build", "run.json", "models.json", "rename"]


def _crash_at(point: str, monkeypatch) -> None:
    """In this (forked) process, die as kill -9 would right after `point` of Run.create."""
    from mlab.run import create as module

    def killed(*args, **kwargs):
        os._exit(137)

    def after(original, when=lambda *a: True):
        def wrapper(*args, **kwargs):
            value = original(*args, **kwargs)
            if when(*args):
                killed()
            return value
        return wrapper

    if point in ("install_starter", "install_run_data", "_copy_build"):
        monkeypatch.setattr(module, point, after(getattr(module, point)))
    elif point in ("run.json", "models.json"):
        monkeypatch.setattr(module, "write_json",
                            after(module.write_json, lambda path, *rest: Path(path).name == point))
    else:
        monkeypatch.setattr(module.os, "rename", lambda *a: killed())


@pytest.mark.parametrize("point", CREATION_POINTS)
def test_a_run_killed_while_its_folder_is_made_leaves_no_run(house_task, tmp_path, point, monkeypatch):
    from mlab.reports.runs import find_run_dirs

    runs = tmp_path / "runs"
    child = os.fork()
    if child == 0:  # pragma: no cover - the crashing creation
        try:
            _crash_at(point, monkeypatch)
            Run.create(house_task, house_task.build.agent("research"), runs,
                       extra={"models.json": {"tiers": {}, "api_base": None, "seed": 0}})
        finally:
            os._exit(0)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 137   # it died at the point, before the folder was whole
    assert [p.name for p in runs.iterdir() if not p.name.startswith(".")] == []
    assert find_run_dirs(runs) == []
    left = list(runs.glob(".*.partial"))   # what the crash left: hidden, and removed once it is old
    assert len(left) == 1
    for path in left:
        os.utime(path, (time.time() - 120, time.time() - 120))
    run = Run.create(house_task, house_task.build.agent("research"), runs,
                     extra={"models.json": {"tiers": {}, "api_base": None, "seed": 0}})
    run.close()
    assert find_run_dirs(runs) == [run.dir]
    assert json.loads((run.dir / "models.json").read_text())["seed"] == 0
    assert not any(runs.glob(".*.partial"))   # the staging name is gone, the abandoned one removed


def test_resuming_a_folder_with_no_models_and_no_step_says_to_start_again(new_run, capsys):
    from mlab.cli import main

    run = new_run()   # as an older mlab left a `mlab run` killed before models.json was written
    run.close()
    assert main(["run", "--resume", str(run.dir)]) == 1
    err = capsys.readouterr().err
    assert "is not a complete run (no models.json and no step taken" in err and "start a new run" in err
    assert "mlab drive --resume" not in err


def test_a_folder_being_made_is_not_taken_for_abandoned(house_task, tmp_path):
    from mlab.locks import RUN_LOCK, try_lock

    runs = tmp_path / "runs"
    busy = runs / ".20260101T000000-abcdef.partial"
    busy.mkdir(parents=True)
    fd = try_lock(busy / RUN_LOCK)   # as a creation in progress in another process holds it
    os.utime(busy, (time.time() - 120, time.time() - 120))
    try:
        Run.create(house_task, house_task.build.agent("research"), runs).close()
        assert busy.is_dir()
    finally:
        os.close(fd)
