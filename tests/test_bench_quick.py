"""Every script of bench/ runs to the end in its quick mode, so that none rots between the full runs
that make the figures of docs/benchmarks.md.

The quick runs take from seconds to about a minute each on a loaded 2-core machine, so they run
where MLAB_BENCH_QUICK=1 is set (.ci/run sets it) and skip otherwise, and they are in the `slow`
tier (a parallel run starts them first). A quick run's figures are not checked: they are too
small to mean anything; only that the script ends well and prints its figure lines.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
# script → a line its quick run prints
EXPECTED = {
    "compile.py": "ratio ours/yaml",
    "gateway.py": "overhead per call",
    "gpu_check.py": "GPU check arithmetic",
    "inputs.py": "operator reply, unclosed fences",
    "memory.py": "harness process of one run",
    "prompt.py": "harness peak memory",
    "report.py": "mlab eval, runs seen before:",
    "setup.py": "in 7 files, made by a generator",   # the data shaped as the full variants' are
    "startup.py": "one-file mlabc check / YAML load",
    "step.py": "resume of a",
    "sweep.py": "local:",
    "tasks.py": "worst ratio",
    "timing_noise.py": "false successes",
    "tree.py": "parallel 2:",
    "viewer.py": "page size per node",
}


def test_every_bench_script_has_a_quick_run():
    assert sorted(p.name for p in BENCH.glob("*.py")) == sorted(EXPECTED)
    for script in EXPECTED:
        assert "--quick" in (BENCH / script).read_text(), script


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("MLAB_BENCH_QUICK") != "1", reason="set MLAB_BENCH_QUICK=1 to run the benchmarks' quick mode")
@pytest.mark.parametrize("script", sorted(EXPECTED))
def test_the_quick_run_of_a_bench_script_ends_well(script, tmp_path):
    env = {**os.environ, "MLAB_CACHE": str(tmp_path / "cache"), "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "SCIKIT_LEARN_DATA": str(tmp_path / "sklearn")}
    done = subprocess.run([sys.executable, str(BENCH / script), "--quick"], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert EXPECTED[script] in done.stdout, done.stdout[-2000:]


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("MLAB_BENCH_QUICK") != "1", reason="set MLAB_BENCH_QUICK=1 to run the benchmarks' quick mode")
def test_the_set_up_bench_measures_the_read_only_target_alone(tmp_path):
    """`--only read-only` leaves out the writable way and cp -r; `--source folder --file-mb 2`
    measures the other shape of data: a folder beside the task, in files of 2 MB (10 MB: 5 files)."""
    env = {**os.environ, "MLAB_CACHE": str(tmp_path / "cache"), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run([sys.executable, str(BENCH / "setup.py"), "--quick", "--only", "read-only",
                           "--source", "folder", "--file-mb", "2"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "read-only / without:" in done.stdout and "cp -r" not in done.stdout, done.stdout
    assert "in 5 files, a folder beside the task" in done.stdout, done.stdout
