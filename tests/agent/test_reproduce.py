"""What a run records to be reproduced and compared: the hardware record in run.json, the task's
version and the compute in result.json, the lock; `mlab run --reproduce RUN` (exact with --replay)
and `mlab lock --check RUN`."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agent_helpers import mlab, only_run, research_reply, result, scripted, trace, write_tiny_task

REPLIES = [research_reply("Execute Script", {"script_name": "fit.py"}),
           research_reply("Final Answer", {"final_answer": "submitted"})]


@pytest.fixture(scope="module")
def scripted_run(tmp_path_factory):
    """A finished scripted run of a private copy of the tiny task (tests below change its files), with a
    seed, limits and a fast model of its own, none of them the default, so that a reproduction that
    dropped any of them would show."""
    folder = tmp_path_factory.mktemp("reproduce")
    source = write_tiny_task(folder / "task")
    code, out, err = mlab("run", source, "--model", scripted(folder, REPLIES),
                          "--fast-model", scripted(folder, REPLIES, "fast.json"), "--seed", "7", "--steps", "9",
                          "--time", "20m", "--runs-dir", folder / "runs")
    assert code == 0, err
    return source, only_run(folder / "runs")


def test_run_json_records_the_hardware_and_validates(scripted_run):
    from mlabc.schemas import problems

    _, run_dir = scripted_run
    meta = json.loads((run_dir / "run.json").read_text())
    assert problems("run", meta) == [] and meta["schema_version"] == 7 and meta["task_version"] == 1
    hardware = meta["hardware"]
    assert hardware["cpus_allowed"] == 1 and hardware["cpus_available"] >= 1 and hardware["os"]
    assert isinstance(hardware["accelerators"], list)
    if shutil.which("nvidia-smi") is None:
        assert hardware["accelerators"] == [] and hardware["accelerator_tool"] is None


def test_result_json_carries_the_task_version_build_and_compute(scripted_run):
    _, run_dir = scripted_run
    document = result(run_dir)
    assert document["schema_version"] == 5 and document["task"] == "tiny" and document["task_version"] == 1
    assert len(document["provenance"]["build_digest"]) == 64
    compute = document["compute"]
    assert compute["scripts"] == 1 and compute["cpu_hours"] == pytest.approx(compute["cpu_s"] / 3600, abs=1e-6)
    assert compute["accelerator_s"] is None and compute["accelerator_note"].startswith("not measured")


def test_the_lock_holds_what_made_the_run(scripted_run):
    from mlabc.schemas import problems

    source, run_dir = scripted_run
    lock = json.loads((run_dir / "lock.json").read_text())
    assert problems("lock", lock) == []
    assert lock["build"]["task_source"] == str(source.resolve()) and str(source.resolve()) in lock["build"]["sources"]
    assert lock["models"]["main"]["model"].startswith("mlab/scripted:") and lock["seed"] == 7
    assert lock["models"]["fast"]["model"].endswith("fast.json") and lock["models"]["edit"]["source"] == "main"
    assert lock["limits"]["steps"] == 9 and lock["limits"]["time"] == 1200 and lock["data"]["variant"] == "lite" and len(lock["data"]["digest"]) == 64
    assert lock["packages"]["mlab"] and lock["hardware"] == json.loads((run_dir / "run.json").read_text())["hardware"]


def test_a_replayed_reproduction_gives_the_same_trace_and_score_and_no_differences(scripted_run, tmp_path):
    _, run_dir = scripted_run
    code, out, err = mlab("run", "--reproduce", run_dir, "--replay", "--runs-dir", tmp_path / "again")
    assert code == 0, err
    again = only_run(tmp_path / "again")
    assert result(again)["score"] == result(run_dir)["score"] is not None
    from mlab.run.lock import comparable

    def steps(folder):  # the script's measured time and memory are the one thing a rerun changes
        return [(r["action"], r["action_input"], comparable(r["observation"])) for r in trace(folder)]

    assert steps(again) == steps(run_dir) and len(steps(run_dir)) == 2
    assert "(measured)" in steps(run_dir)[0][2] and "s wall" not in steps(run_dir)[0][2]
    assert f"reproduction of {run_dir}: no differences" in out


def test_a_reproduction_takes_the_locked_seed_and_limits_and_replays_every_tier(scripted_run, tmp_path):
    _, run_dir = scripted_run
    code, _, err = mlab("run", "--reproduce", run_dir, "--replay", "--runs-dir", tmp_path / "again")
    assert code == 0, err
    again = only_run(tmp_path / "again")
    lock, original = (json.loads((folder / "lock.json").read_text()) for folder in (again, run_dir))
    assert lock["seed"] == original["seed"] == 7
    assert json.loads((again / "run.json").read_text())["seed"] == 7
    assert json.loads((again / "models.json").read_text())["seed"] == 7
    assert lock["limits"] == original["limits"] and lock["limits"]["steps"] == 9 and lock["limits"]["time"] == 1200
    assert json.loads((again / "run.json").read_text())["limits"]["steps"] == 9
    assert {tier: config["model"] for tier, config in lock["models"].items()} == {
        tier: f"mlab/replay:{run_dir}" for tier in ("main", "fast", "edit")}


def test_reproduce_refuses_options_the_lock_fixes_and_a_folder_without_a_lock(scripted_run, tmp_path):
    _, run_dir = scripted_run
    code, _, err = mlab("run", "--reproduce", run_dir, "--seed", "3", "--runs-dir", tmp_path)
    assert code == 2 and "do not give --seed" in err
    code, _, err = mlab("run", "--reproduce", tmp_path, "--runs-dir", tmp_path / "r")
    assert code == 2 and "has no lock.json" in err
    code, _, err = mlab("run", "tiny", "--replay")
    assert code == 2 and "--replay goes with --reproduce" in err


def test_lock_check_passes_on_the_same_checkout_and_names_a_changed_input(scripted_run):
    source, run_dir = scripted_run
    code, out, err = mlab("lock", "--check", run_dir)
    assert code == 0, out + err
    assert "this checkout would reproduce the run" in out
    fit = source.parent / "env" / "fit.py"
    original = fit.read_text()
    fit.write_text(original + "# changed\n")
    try:
        code, out, _ = mlab("lock", "--check", run_dir)
    finally:
        fit.write_text(original)
    assert code == 1 and "would not reproduce the run exactly" in out
    assert f"input {fit.resolve()}" in out and "artifact" not in out.split("would not")[0].split("input")[0]
    assert "scored starter" in out


def test_lock_check_of_a_folder_that_is_no_run(tmp_path):
    code, _, err = mlab("lock", "--check", tmp_path / "nothing")
    assert code == 2 and "no such run folder" in err


def test_accelerators_are_read_from_nvidia_smi_and_name_the_hardware_class(monkeypatch):
    import subprocess

    from mlab.run import hardware

    def smi(argv, **kwargs):
        assert argv[0] == "nvidia-smi" and "--query-gpu=name,memory.total,driver_version" in argv
        return subprocess.CompletedProcess(argv, 0, "NVIDIA H100 80GB HBM3, 81559, 550.54\n"
                                                    "NVIDIA H100 80GB HBM3, 81559, 550.54\n", "")

    monkeypatch.setattr(hardware.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    found = hardware.accelerators(run=smi)
    assert found == {"vendor_tool": "nvidia-smi", "devices": [
        {"model": "NVIDIA H100 80GB HBM3", "memory_bytes": 81559 * 2**20, "driver": "550.54", "index": i}
        for i in range(2)]}
    record = {"accelerators": found["devices"], "cpus_allowed": 8}
    assert hardware.hardware_class(record) == "2x NVIDIA H100 80GB HBM3, 8 CPU"
    assert hardware.hardware_class(None) == "unknown"
    assert hardware.accelerator_note(record) == "not measured: the accelerators were not listed by nvidia-smi"
    assert hardware.accelerator_note({**record, "accelerator_tool": "nvidia-smi"}) == "not measured: no script ran"
    failing = hardware.accelerators(run=lambda argv, **kwargs: subprocess.CompletedProcess(argv, 9, "", "no driver"))
    assert failing == {"vendor_tool": "nvidia-smi", "devices": []}


def test_a_reproduction_without_the_models_key_points_at_replay(scripted_run, tmp_path, monkeypatch):
    # the lock fixes the models, so --model is no way out here: the hint is --replay, an option of mlab run
    _, run_dir = scripted_run
    copy = tmp_path / "keyed"
    shutil.copytree(run_dir, copy)
    lock = json.loads((copy / "lock.json").read_text())
    for tier in lock["models"].values():
        tier["model"] = "anthropic/claude-sonnet-4-5"
    (copy / "lock.json").write_text(json.dumps(lock))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    code, _, err = mlab("run", "--reproduce", copy, "--runs-dir", tmp_path / "runs")
    assert code == 2, err
    assert "needs ANTHROPIC_API_KEY in the environment; set it, or add --replay" in err
    assert "--model" not in err
