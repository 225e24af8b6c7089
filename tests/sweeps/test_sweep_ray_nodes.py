"""A sweep across two Ray nodes with no shared run folder: a head and a worker node started as
separate `ray start` processes on this machine, each with its own temporary folder (the runs'
scratch folders) and no folder of the sweep's; every run's folder comes home whole, a worker
node killed in the middle of a run has that run resumed on the head, and the results equal
those of the local executor on the same plan."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from needs import module
from sweep_helpers import compile_build, run_folders, run_sweep, sweep_command, trace_steps, write_tiny_task

ray = module("ray", "Ray is not installed (pip install 'mlab-harness[ray]'); the Ray executor is untested")
# the `ray` command of this interpreter (the `ray` script's first line may name another Python,
# whose workers would import another mlab)
RAY = [sys.executable, "-c", "import sys; from ray.scripts.scripts import main; sys.argv[0] = 'ray'; main()"]
PORT = 26381


def start_node(folder: Path, *arguments: str) -> subprocess.Popen:
    """One `ray start --block` in a session of its own, its temporary folders under `folder`."""
    (folder / "tmp").mkdir(parents=True)
    env = {**os.environ, "TMPDIR": str(folder / "tmp"), "RAY_USAGE_STATS_ENABLED": "0"}
    with open(folder / "ray-start.log", "wb") as log:
        return subprocess.Popen([*RAY, "start", "--block", "--temp-dir", str(folder / "ray"), "--num-cpus", "1",
                                 "--node-ip-address", "127.0.0.1", "--disable-usage-stats", *arguments], env=env,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def alive_nodes(address: str) -> int:
    done = subprocess.run([*RAY, "status", "--address", address], capture_output=True, text=True, timeout=60)
    return len(re.findall(r"^\s*1 node_", done.stdout, re.M))


def start_log(folder: Path) -> str:
    return (folder / "ray-start.log").read_text(errors="replace")[-3000:]


@pytest.fixture
def short_tmp():
    """A folder with a short path: Ray's sockets live in its temporary folder, at most 107 bytes."""
    folder = Path(tempfile.mkdtemp(prefix="mr", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def two_nodes(short_tmp, monkeypatch):
    tmp_path = short_tmp
    # the nodes and the sweep's driver without Ray's token authentication: they share no token here
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    address = f"127.0.0.1:{PORT}"
    head = start_node(tmp_path / "h", "--head", "--port", str(PORT), "--include-dashboard", "false")
    worker = None
    try:
        deadline = time.monotonic() + 120
        while alive_nodes(address) < 1:
            assert head.poll() is None and time.monotonic() < deadline, start_log(tmp_path / "h")
            time.sleep(1)
        worker = start_node(tmp_path / "w", "--address", address)
        while alive_nodes(address) < 2:
            assert worker.poll() is None and time.monotonic() < deadline, start_log(tmp_path / "w")
            time.sleep(1)
        yield address, head, worker, tmp_path
    finally:
        for node in (worker, head):
            if node is not None and node.poll() is None:
                os.killpg(node.pid, signal.SIGTERM)
                try:
                    node.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(node.pid, signal.SIGKILL)


def outcome(run: Path) -> tuple:
    """What must not depend on where a run ran: its seed, score, steps, actions and observations of
    the scripted model's replies."""
    result = json.loads((run / "result.json").read_text())
    records = [json.loads(line) for line in (run / "trace.jsonl").read_text().splitlines()]
    return (json.loads((run / "run.json").read_text())["seed"], result["score"], result["steps"],
            result["success"], [(r["action"], r["status"]) for r in records])


@pytest.mark.slow
def test_a_sweep_across_two_ray_nodes_brings_every_run_home_and_survives_a_lost_node(project, two_nodes):
    address, head, worker, scratch = two_nodes
    write_tiny_task(project, sleep=8.0)   # long enough that the worker node dies in the middle of a run
    (project / "exp.mlab").write_text(textwrap.dedent("""\
        use "tiny.mlab"
        experiment nodes {
          tasks [tiny]
          agents [research]
          models ["mlab/demo"]
          runs 2
          limits { steps 4 }
        }
        """))
    experiment = str(compile_build(project / "exp.mlab", project / "build") / "experiments" / "nodes.yaml")
    sweep = project / "runs" / "nodes"
    process = subprocess.Popen(sweep_command(experiment, "--executor", "ray", "--address", address, "--workers", "2",
                                             "--plain"),
                               cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 240
        while True:   # each node has a run, and the worker node's run has sent its first step home
            logs = list((sweep / "logs").rglob("*.log")) if (sweep / "logs").is_dir() else []
            # where each run's scratch folder is: under the head's or the worker's own temporary folder
            where = {log.name: Path(found).relative_to(scratch).parts[0] for log in logs
                     for found in re.findall(r"on Ray node .*, in (\S+)", log.read_text(errors="replace"))}
            assert process.poll() is None and time.monotonic() < deadline, (where, process.communicate()[0])
            on_worker = {int(re.search(r"seed=(\d+)", name).group(1)) for name, node in where.items() if node == "w"}
            home = [json.loads((run / "run.json").read_text())["seed"] for run in run_folders(sweep) if trace_steps(run)]
            if set(where.values()) == {"h", "w"} and on_worker & set(home):
                break
            time.sleep(0.1)
        os.killpg(worker.pid, signal.SIGKILL)   # the whole worker node: its raylet and the run's worker
        output, _ = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, output
    assert "2 of 2 runs done, 0 failed, 0 unfinished" in output, output
    assert "its worker was lost; continuing from its last step" in output, output
    runs = run_folders(sweep)
    assert len(runs) == 2
    for run in runs:   # whole: trace, result, snapshots and the workspace of the last piece
        records = [json.loads(line) for line in (run / "trace.jsonl").read_text().splitlines()]
        assert [r["step"] for r in records] == list(range(1, len(records) + 1))
        assert (run / "result.json").is_file() and (run / "workspace" / "submission.csv").is_file()
        assert (run / "objects").is_dir() and any((run / "objects").iterdir())
    ray_runs = sorted(outcome(run) for run in runs)
    local = run_sweep(experiment, "--executor", "local", "--workers", "2", "--runs-dir", str(project / "local"),
                      "--plain", cwd=project, timeout=300)
    assert local.returncode == 0, local.stdout + local.stderr
    assert sorted(outcome(run) for run in run_folders(project / "local" / "nodes")) == ray_runs
