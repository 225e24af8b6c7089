"""A run process started by a sweep dies with the sweep, even when the sweep dies while the run
process is being started (between the fork and its request to be killed with its parent)."""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sweep_helpers import processes_mentioning

# The sweep's part: start a run process as the executors do, its start slowed after the fork so
# that the sweep can be killed in between ("asked" marks that moment); the run writes "ran".
SWEEP = """\
import functools, os, subprocess, sys, time
from pathlib import Path
from mlab.sweeps.executors import die_with_parent

folder = Path(sys.argv[1])

def slow_start(parent):
    (folder / "asked").touch()
    time.sleep(2.0)
    die_with_parent(parent)

run = subprocess.Popen([sys.executable, "-c", f"open({str(folder / 'ran')!r}, 'w').close()"],
                       preexec_fn=functools.partial(slow_start, os.getpid()))
sys.exit(run.wait())
"""


def _start(folder: Path) -> subprocess.Popen:
    folder.mkdir()
    return subprocess.Popen([sys.executable, "-c", SWEEP, str(folder)])


def _gone(text: str, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while processes_mentioning(text) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not processes_mentioning(text)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl(PR_SET_PDEATHSIG) is Linux's")
def test_a_run_process_whose_sweep_died_while_it_started_leaves_without_running(tmp_path):
    alive = _start(tmp_path / "alive")   # the sweep lives: its run process runs
    assert alive.wait(timeout=60) == 0
    assert (tmp_path / "alive" / "ran").exists()

    killed = _start(tmp_path / "killed")
    deadline = time.monotonic() + 60
    while not (tmp_path / "killed" / "asked").exists():
        assert killed.poll() is None and time.monotonic() < deadline, "the run process was not started"
        time.sleep(0.01)
    killed.send_signal(signal.SIGKILL)   # the sweep dies after the fork, before the request
    killed.wait()
    assert _gone(str(tmp_path / "killed")), "the run process outlived the sweep"
    assert not (tmp_path / "killed" / "ran").exists()
