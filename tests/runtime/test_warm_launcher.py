"""The next script's launcher is started while a script runs (mlab.sandbox.warm): the next
script of the same thread uses it, sees nothing of how it was configured, and a launcher
nobody uses ends with its thread or when released."""
from __future__ import annotations

import os
import shutil
import subprocess
import threading

import pytest

from conftest_sandbox import folders, mode, sandboxed, zombie_children  # noqa: F401  (fixtures)
from mlab.sandbox import warm


@pytest.fixture
def taken(monkeypatch):
    """The pids of the launchers scripts were given, in order."""
    pids = []
    real = warm.take_launcher

    def recorded():
        launched = real()
        pids.append(launched.process.pid)
        return launched

    monkeypatch.setattr(warm, "take_launcher", recorded)
    warm.release()
    yield pids
    warm.release()


def test_the_next_script_runs_under_the_launcher_started_during_the_last(folders, mode, taken):
    first = folders.run("print('one')")
    ahead = warm._ready.launched
    assert ahead is not None and ahead.process.poll() is None  # started, idle, waiting
    second = folders.run("print('two')")
    assert (first.exit_code, second.exit_code) == (0, 0) and "two" in second.output
    assert taken[1] == ahead.process.pid
    assert ahead.process.returncode is not None  # it ran the second script and was reaped


def test_a_script_under_a_launcher_started_ahead_reads_no_configuration(folders, mode, taken):
    folders.run("pass")
    result = folders.run("""
        import os, sys
        print("stdin:", repr(sys.stdin.read()))
        print("config in environment:", any("SANDBOX_CONFIG" in k for k in os.environ))
    """)
    assert "stdin: ''" in result.output and "config in environment: False" in result.output


def test_a_launcher_started_ahead_that_died_is_replaced(folders, sandboxed, taken):
    folders.run("pass")
    warm._ready.launched.process.kill()
    warm._ready.launched.process.wait()
    result = folders.run("print('still runs')")
    assert result.exit_code == 0 and "still runs" in result.output


def test_an_unused_launcher_ends_when_released_or_with_its_thread(folders, sandboxed, taken):
    folders.run("pass")
    idle = warm._ready.launched
    warm.release()
    assert idle.process.returncode == 0
    left = []

    def one_script():
        folders.run("pass")
        left.append(warm._ready.launched.process)

    thread = threading.Thread(target=one_script)
    thread.start()
    thread.join()
    assert left[0].wait(timeout=5) == 0  # its pipe closed with the thread: it read no configuration
    assert left[0].pid not in zombie_children()


def test_mlab_sandbox_cold_starts_every_launcher_on_demand(folders, sandboxed, taken, monkeypatch):
    monkeypatch.setenv(warm.COLD_VARIABLE, "1")
    assert folders.run("pass").exit_code == 0
    assert warm._ready.launched is None


def test_the_tasks_of_a_user_are_counted_threads_included():
    from mlab.sandbox import proc

    if os.geteuid() != 0:
        pytest.skip("starting a process as a uid of its own needs root")
    uid = 2 ** 31 - 7   # a uid nothing else runs as
    assert proc.tasks_of_user(uid) == 0
    python = shutil.which("python3", path="/usr/bin:/bin")   # one the uid can reach (not under /root)
    if python is None:
        pytest.skip("no system python3 for the uid to run")
    code = ("import threading, time\n"
            "[threading.Thread(target=time.sleep, args=(30,), daemon=True).start() for _ in range(2)]\n"
            "print('ready', flush=True); time.sleep(30)")
    process = subprocess.Popen([python, "-I", "-S", "-c", code], user=uid, group=uid,
                               stdout=subprocess.PIPE, text=True, cwd="/")
    try:
        assert process.stdout.readline().strip() == "ready"
        assert proc.tasks_of_user(uid) == 3   # one process, three threads
    finally:
        process.kill()
        process.wait()


def test_a_forked_child_does_not_take_its_parents_idle_launcher(folders, sandboxed, taken):
    folders.run("pass")
    idle = warm._ready.launched
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        os.write(write, b"none" if warm._ready.launched is None else b"kept")
        os._exit(0)
    os.close(write)
    assert os.read(read, 10) == b"none"
    os.close(read)
    os.waitpid(child, 0)
    assert warm._ready.launched is idle and idle.process.poll() is None  # the parent's, still waiting
    assert folders.run("print('after the fork')").exit_code == 0 and taken[-1] == idle.process.pid
