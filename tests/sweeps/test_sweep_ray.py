"""The Ray executor on a local Ray instance started here: runs come home as tar pieces, and a
worker killed in the middle of a run leaves a run that the sweep resumes."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest
from needs import module
from sweep_helpers import (compile_build, processes_mentioning, run_folders, sweep_command, trace_steps,
                           write_tiny_task)

ray = module("ray", "Ray is not installed (pip install 'mlab-harness[ray]'); the Ray executor is untested")


@pytest.fixture(scope="module")
def ray_address():
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=200 * 2**20)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


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


def test_a_ray_sweep_survives_a_lost_worker(project, ray_address):
    # train.py sleeps 3 s, so that the run whose first step came home is still running when its
    # worker is killed, even on a loaded machine
    write_tiny_task(project, sleep=3.0)
    (project / "exp.mlab").write_text(textwrap.dedent("""\
        use "tiny.mlab"
        experiment on-ray {
          tasks [tiny]
          agents [research]
          models ["mlab/demo"]
          runs 2
          limits { steps 4 }
        }
        """))
    experiment = str(compile_build(project / "exp.mlab", project / "build") / "experiments" / "on-ray.yaml")
    sweep = project / "runs" / "on-ray"
    process = subprocess.Popen(sweep_command(experiment, "--executor", "ray", "--address", ray_address, "--plain"),
                               cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
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
    runs = run_folders(sweep)
    assert len(runs) == 2 and len(list((sweep / "runs").rglob("result.json"))) == 2
    for run in runs:
        records = [json.loads(line) for line in (run / "trace.jsonl").read_text().splitlines()]
        assert [r["step"] for r in records] == list(range(1, len(records) + 1))
        result = json.loads((run / "result.json").read_text())
        assert result["steps"] == sum(r["status"] in ("ok", "error", "final") for r in records) and result["score"] is not None
        assert (run / "workspace" / "submission.csv").is_file()  # the last piece brought the workspace
    assert processes_mentioning("ray::mlab tiny/") == []
