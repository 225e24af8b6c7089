"""The Ray executor on a local Ray instance started here: runs come home as tar pieces, and a
worker killed in the middle of a run leaves a run that the sweep resumes."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import textwrap
import time

import pytest
from sweep_helpers import compile_build, processes_mentioning, run_folders, sweep_command, trace_steps

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'mlab-harness[ray]'); the Ray executor is untested")


@pytest.fixture(scope="module")
def ray_address():
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=200 * 2**20)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def _worker_running_a_run(timeout=60.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        workers = processes_mentioning("ray::mlab tiny/")
        if workers:
            return workers[0]
        time.sleep(0.05)
    raise AssertionError("no Ray worker was running a run")


def test_a_ray_sweep_survives_a_lost_worker(project, ray_address):
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
        while not any(trace_steps(run) for run in run_folders(sweep)):  # a step has come home
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()[0]
            time.sleep(0.05)
        os.kill(_worker_running_a_run(), signal.SIGKILL)
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
