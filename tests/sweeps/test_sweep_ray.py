"""The Ray executor on a cluster of two nodes started here, once for the module: a head and a worker
node as separate `ray start` processes on this machine, each with its own temporary folder (the
runs' scratch folders) and no folder of the sweep's. Runs come home in pieces, whole; a Ray worker
killed in the middle of a run, or the whole worker node, leaves a run that the sweep resumes; and
the results equal those of the local executor on the same plan.

The node test kills the worker node, so it comes last (both tests are in the slow tier, which keeps
the file's order); the lost-worker test needs only a free CPU, on either node."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from needs import module
from sweep_helpers import (compile_build, processes_mentioning, run_folders, run_sweep, sweep_command, trace_steps,
                           write_tiny_task)

ray = module("ray", "Ray is not installed (pip install 'mlab-harness[ray]'); the Ray executor is untested")
# the `ray` command of this interpreter (the `ray` script's first line may name another Python,
# whose workers would import another mlab)
RAY = [sys.executable, "-c", "import sys; from ray.scripts.scripts import main; sys.argv[0] = 'ray'; main()"]
STARTED = "Ray runtime started."  # `ray start` prints it once its node is registered with the head


class Cluster:
    """A head and a worker node, each a `ray start --block` in a session of its own."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.address = f"127.0.0.1:{free_port()}"
        self.head = self.start("h", "--head", "--port", self.address.rsplit(":", 1)[1], "--include-dashboard", "false")
        self.worker = self.start("w", "--address", self.address)

    def start(self, name: str, *arguments: str) -> subprocess.Popen:
        """A node whose temporary folders are under folder/name; back once it has joined the cluster
        (the worker waits for the head's line, so that the head's GCS answers it)."""
        folder = self.folder / name
        (folder / "tmp").mkdir(parents=True)
        env = {**os.environ, "TMPDIR": str(folder / "tmp"), "RAY_USAGE_STATS_ENABLED": "0"}
        with open(folder / "ray-start.log", "wb") as log:
            node = subprocess.Popen([*RAY, "start", "--block", "--temp-dir", str(folder / "ray"), "--num-cpus", "1",
                                     "--node-ip-address", "127.0.0.1", "--disable-usage-stats", *arguments], env=env,
                                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 180
        while STARTED not in self.log(name):
            assert node.poll() is None and time.monotonic() < deadline, self.log(name)[-3000:]
            time.sleep(0.1)
        return node

    def log(self, name: str) -> str:
        return (self.folder / name / "ray-start.log").read_text(errors="replace")

    def stop(self) -> None:
        """SIGKILL to each node's whole process group: a SIGTERM'd head drains for 30 s first."""
        for node in (self.worker, self.head):
            if node is not None and node.poll() is None:
                os.killpg(node.pid, signal.SIGKILL)
                node.wait(timeout=60)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def cluster():
    # a short folder: Ray's sockets live in its temporary folder, at most 107 bytes
    folder = Path(tempfile.mkdtemp(prefix="mr", dir="/tmp"))
    made = None
    # the nodes and the sweep's driver without Ray's token authentication: they share no token here
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_AUTH_MODE", "disabled")
        try:
            made = Cluster(folder)
            yield made
        finally:
            if made is not None:
                made.stop()
            shutil.rmtree(folder, ignore_errors=True)


def ray_experiment(project: Path, name: str, sleep: float) -> str:
    """Two seeds of the tiny task (train.py sleeps `sleep` s, so a run can be stopped in the
    middle), compiled; the experiment's YAML path."""
    write_tiny_task(project, sleep=sleep)
    (project / "exp.mlab").write_text(textwrap.dedent(f"""\
        use "tiny.mlab"
        experiment {name} {{
          tasks [tiny]
          agents [research]
          models ["mlab/demo"]
          runs 2
          limits {{ steps 4 }}
        }}
        """))
    return str(compile_build(project / "exp.mlab", project / "build") / "experiments" / f"{name}.yaml")


def started_sweep(experiment: str, cluster: Cluster, project: Path) -> subprocess.Popen:
    return subprocess.Popen(sweep_command(experiment, "--executor", "ray", "--address", cluster.address, "--workers",
                                          "2", "--plain"),
                            cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def assert_whole(runs: list[Path]) -> None:
    """Every run at home whole: its trace numbered from 1, its result, snapshots and the workspace
    of the last piece."""
    assert len(runs) == 2
    for run in runs:
        records = [json.loads(line) for line in (run / "trace.jsonl").read_text().splitlines()]
        assert [r["step"] for r in records] == list(range(1, len(records) + 1))
        result = json.loads((run / "result.json").read_text())
        assert result["steps"] == sum(r["status"] in ("ok", "error", "final") for r in records)
        assert result["score"] is not None and (run / "workspace" / "submission.csv").is_file()
        assert (run / "objects").is_dir() and any((run / "objects").iterdir())


def _worker_running_a_run(seed: int, timeout=60.0) -> int:
    """The Ray worker whose task runs the run of this seed (its process title names the run)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in processes_mentioning("ray::mlab tiny/"):
            try:
                title = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
            except OSError:  # ended since
                continue
            if re.search(rf"/seed={seed}\b", title):
                return pid
        time.sleep(0.05)
    raise AssertionError(f"no Ray worker was running the run of seed {seed}")


@pytest.mark.slow
def test_a_ray_sweep_survives_a_lost_worker(project, cluster):
    # train.py sleeps 3 s, so that the run whose first step came home is still running when its
    # worker is killed, even on a loaded machine
    experiment = ray_experiment(project, "on-ray", sleep=3.0)
    sweep = project / "runs" / "on-ray"
    process = started_sweep(experiment, cluster, project)
    try:
        deadline = time.monotonic() + 180
        while not (home := [run for run in run_folders(sweep) if trace_steps(run)]):  # a step has come home
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()[0]
            time.sleep(0.05)
        # the worker of that run (the other run's worker may not have sent its folder yet: killing
        # it would only start that run again)
        os.kill(_worker_running_a_run(json.loads((home[0] / "run.json").read_text())["seed"]), signal.SIGKILL)
        output, _ = process.communicate(timeout=180)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, output
    assert "its worker was lost; continuing from its last step" in output
    assert "2 of 2 runs done, 0 failed, 0 unfinished" in output
    assert_whole(run_folders(sweep))
    assert len(list((sweep / "runs").rglob("result.json"))) == 2
    assert processes_mentioning("ray::mlab tiny/") == []


def outcome(run: Path) -> tuple:
    """What must not depend on where a run ran: its seed, score, steps, actions and observations of
    the scripted model's replies."""
    result = json.loads((run / "result.json").read_text())
    records = [json.loads(line) for line in (run / "trace.jsonl").read_text().splitlines()]
    return (json.loads((run / "run.json").read_text())["seed"], result["score"], result["steps"],
            result["success"], [(r["action"], r["status"]) for r in records])


def attempts(sweep: Path, cluster: Cluster) -> dict[int, list[str]]:
    """seed → the nodes its attempts ran on ("h" or "w"), from the sweep's logs, which name the
    scratch folder of each attempt (under its node's own temporary folder)."""
    found: dict[int, list[str]] = {}
    for log in sorted((sweep / "logs").rglob("*.log")) if (sweep / "logs").is_dir() else []:
        seed = int(re.search(r"seed=(\d+)", log.name).group(1))
        for scratch in re.findall(r"on Ray node .*, in (\S+)", log.read_text(errors="replace")):
            found.setdefault(seed, []).append(Path(scratch).relative_to(cluster.folder).parts[0])
    return found


@pytest.mark.slow
def test_a_sweep_across_two_ray_nodes_brings_every_run_home_and_survives_a_lost_node(project, cluster):
    assert cluster.worker.poll() is None, "the worker node is gone: this test must come last"
    experiment = ray_experiment(project, "nodes", sleep=3.0)
    sweep = project / "runs" / "nodes"
    process = started_sweep(experiment, cluster, project)
    try:
        deadline = time.monotonic() + 240
        while True:   # the worker node's run has sent its first step home
            where = attempts(sweep, cluster)
            assert process.poll() is None and time.monotonic() < deadline, (where, process.communicate()[0])
            home = [json.loads((run / "run.json").read_text())["seed"] for run in run_folders(sweep) if trace_steps(run)]
            if any(nodes[-1:] == ["w"] and seed in home for seed, nodes in where.items()):
                break
            time.sleep(0.1)
        os.killpg(cluster.worker.pid, signal.SIGKILL)   # the whole worker node: its raylet and the run's worker
        output, _ = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, output
    assert "2 of 2 runs done, 0 failed, 0 unfinished" in output, output
    assert "its worker was lost; continuing from its last step" in output, output
    # one run began on the worker node and ended on the head; the other ran on the head
    assert sorted(attempts(sweep, cluster).values()) == [["h"], ["w", "h"]], attempts(sweep, cluster)
    runs = run_folders(sweep)
    assert_whole(runs)
    ray_runs = sorted(outcome(run) for run in runs)
    local = run_sweep(experiment, "--executor", "local", "--workers", "2", "--runs-dir", str(project / "local"),
                      "--plain", cwd=project, timeout=300)
    assert local.returncode == 0, local.stdout + local.stderr
    assert sorted(outcome(run) for run in run_folders(project / "local" / "nodes")) == ray_runs
