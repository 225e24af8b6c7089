"""Scripts in a resident sandbox (mlab.sandbox.resident), the one a thread keeps for the scripts of
one workspace: each script sees what a fresh sandbox would show it, leaves nothing to the next,
and a hostile one ends the sandbox, never the harness."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid

import pytest

from conftest_sandbox import MiB, folders, processes_with, sandboxed  # noqa: F401  (fixtures)
from mlab.sandbox import resident
from mlab.sandbox.runner import run_script

VIEW = """
import json, os, signal, sys
print(json.dumps({
    "argv": sys.argv, "orig_argv": sys.orig_argv, "path0": sys.path[0], "file": __file__,
    "loader": type(__loader__).__name__, "spec": repr(__spec__), "cached": __cached__,
    "main": sorted(globals()), "modules": sorted(sys.modules), "cwd": os.getcwd(),
    "stdin": sys.stdin.read(), "env": dict(os.environ), "uid": os.getuid(), "gid": os.getgid(),
    "fds": sorted(os.listdir("/proc/self/fd")), "tmp": sorted(os.listdir("/tmp")),
    "group": os.getpgid(0), "session": os.getsid(0),
    "signals": [str(signal.getsignal(sig)) for sig in range(1, signal.NSIG) if sig not in (signal.SIGKILL, signal.SIGSTOP)]}))
print("PID", os.getpid())
"""


@pytest.fixture(autouse=True)
def no_residents_left(monkeypatch):
    """Each test starts without resident sandboxes; those it started are gone, all of their
    processes, once released."""
    resident.release()
    started = []
    real = resident.start

    def recorded(*args, **kwargs):
        made = real(*args, **kwargs)
        if made is not None:
            started.append(made.launched.process.pid)
        return made

    monkeypatch.setattr(resident, "start", recorded)
    yield
    resident.release()
    assert [pid for pid in started if os.path.exists(f"/proc/{pid}")] == []


def run(folders, code: str, name: str = "script.py", **changes):
    return folders.run(code, name=name, resident=True, **changes)


def view_of(result) -> dict:
    assert result.exit_code == 0, result.output
    return json.loads(result.output.splitlines()[0])


def pid_of(result) -> int:
    return int(next(line for line in result.output.splitlines() if line.startswith("PID "))[4:])


def test_a_script_sees_what_a_fresh_sandbox_shows_it(folders, sandboxed):
    fresh = folders.run(VIEW)
    first, second = run(folders, VIEW), run(folders, VIEW)
    assert pid_of(fresh) == 2   # a fresh sandbox's script is the first process under its init
    assert pid_of(second) > pid_of(first) > 2   # forks of the one resident interpreter
    assert view_of(first) == view_of(fresh)
    assert view_of(second) == view_of(fresh)


@pytest.mark.parametrize("code", [
    "def f():\n    raise ValueError('boom')\nf()\n",
    "x = (\n",
    "import sys\nprint('partial', end='')\nsys.exit(3)\n",
    "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
    "raise SystemExit('a message')\n",
    "import os, signal\nos.killpg(0, signal.SIGTERM)\n",
    "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\n",
], ids=["exception", "syntax-error", "exit-3", "killed", "exit-message", "terminates-its-group", "interrupted"])
def test_how_a_script_ends_is_reported_as_for_a_fresh_sandbox(folders, sandboxed, code):
    fresh = folders.run(code)
    run(folders, "pass")   # the resident is started: the script below is a fork of it
    kept = run(folders, code)
    assert (kept.exit_code, kept.output, kept.killed_reason) == (fresh.exit_code, fresh.output, fresh.killed_reason)


def test_what_a_script_writes_at_its_end_is_written(folders, sandboxed):
    run(folders, "pass")
    result = run(folders, """
        import atexit, threading, time
        left_open = open("unclosed.txt", "w")
        left_open.write("flushed at exit")
        atexit.register(print, "atexit ran")
        threading.Thread(target=lambda: (time.sleep(0.3), open("thread.txt", "w").write("joined"))).start()
    """)
    assert result.exit_code == 0 and result.output == "atexit ran\n"
    assert (folders.workspace / "unclosed.txt").read_text() == "flushed at exit"
    assert (folders.workspace / "thread.txt").read_text() == "joined"


def test_nothing_of_a_script_is_left_for_the_next(folders, sandboxed):
    marker = f"mlab-daemon-{uuid.uuid4().hex}"
    first = run(folders, f"""
        import ctypes, os, subprocess
        open("/tmp/left.txt", "w").write("x")
        os.makedirs("/tmp/deep/er")
        os.chmod("/tmp/deep", 0)
        open("/dev/shm/left", "w").write("x")
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.shmget(4242, 4096, 0o1000 | 0o600) >= 0   # IPC_CREAT
        subprocess.Popen(["/bin/sh", "-c", "sleep 60 # {marker}"], start_new_session=True)
        print("PID", os.getpid())
    """)
    assert first.exit_code == 0, first.output
    assert processes_with(marker) == []   # killed as the script ended, as a namespace's death kills
    second = run(folders, """
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        print(sorted(os.listdir("/tmp")), os.listdir("/dev/shm"), libc.shmget(4242, 0, 0))
        print("PID", os.getpid())
    """)
    listing = second.output.splitlines()[0]
    assert "left.txt" not in listing and "deep" not in listing and "'left'" not in listing
    assert listing.endswith(" -1")   # no shared memory segment under the key
    assert pid_of(second) > pid_of(first)   # the same resident sandbox


def test_the_workspace_under_tmp_survives_the_cleaning(folders, sandboxed):
    assert str(folders.workspace).startswith("/tmp/")   # pytest's tmp_path: bound below the sandbox's /tmp
    run(folders, "open('kept.txt', 'w').write('still here')")
    result = run(folders, "print(open('kept.txt').read()); print(open('../private/answers.csv').read())")
    assert result.output.startswith("still here\n") and "SECRET-ANSWER" not in result.output
    assert "No such file" in result.output   # private/ stays hidden in a resident sandbox too


def test_a_read_only_file_stays_read_only_and_a_replaced_one_is_seen(folders, sandboxed):
    data = folders.workspace / "data.csv"
    data.write_text("first\n")
    read_only = (data,)
    write = "open('data.csv', 'w').write('changed')"
    refused = folders.run(write, read_only=read_only)
    assert "Read-only file system" in refused.output
    assert run(folders, write, read_only=read_only).output == refused.output
    first = run(folders, "import os; print(open('data.csv').read().strip(), os.getpid())", read_only=read_only)
    data.unlink()
    data.write_text("second\n")   # the harness put another file there: bound at a new sandbox's start
    second = run(folders, "import os; print(open('data.csv').read().strip(), os.getpid())", read_only=read_only)
    assert first.output.split()[0] == "first" and second.output.split()[0] == "second"
    assert "Read-only file system" in run(folders, write, read_only=read_only).output
    assert data.read_text() == "second\n"


def test_other_settings_get_another_sandbox(folders, sandboxed):
    first = run(folders, "import os; print(os.environ.get('COLOUR'))", env={"COLOUR": "red"})
    second = run(folders, "import os; print(os.environ.get('COLOUR'))", env={"COLOUR": "blue"})
    assert (first.output, second.output) == ("red\n", "blue\n")


def test_any_other_command_is_run_as_given(folders, sandboxed):
    policy = folders.policy(resident=True)
    run(folders, "pass")
    result = run_script(["/bin/sh", "-c", "echo from sh; exit 4"], policy)
    assert (result.exit_code, result.output) == (4, "from sh\n")


def test_a_long_output_arrives_whole_and_bounded(folders, sandboxed):
    streamed = []
    run(folders, "pass")
    result = run(folders, """
        import sys
        print("FIRST")
        for _ in range(40):
            sys.stdout.write("y" * (1 << 17) + "\\n")
        print("LAST")
    """, max_output_chars=2000, on_output=streamed.append)
    assert result.exit_code == 0 and result.output.startswith("FIRST") and result.output.rstrip().endswith("LAST")
    assert result.output_chars > 40 * (1 << 17)


# --- hostile scripts: the sandbox ends, the harness carries on --------------------------

def carries_on(folders) -> None:
    result = run(folders, "print('still fine')", name="after.py")
    assert (result.exit_code, result.output) == (0, "still fine\n")


def test_a_script_that_kills_the_resident_interpreter_ends_its_sandbox(folders, sandboxed):
    run(folders, "pass")
    result = run(folders, "import os, time; os.kill(os.getppid(), 9); time.sleep(30)")
    assert result.exit_code is None and "init process stopped working" in result.killed_reason
    assert result.wall_s < 10
    carries_on(folders)


def test_a_script_that_stops_the_resident_interpreter_is_ended_at_once(folders, sandboxed):
    run(folders, "pass")
    started = time.monotonic()
    result = run(folders, "import os, signal, time; os.kill(os.getppid(), signal.SIGSTOP); time.sleep(30)")
    assert result.exit_code is None and "init process stopped working" in result.killed_reason
    assert time.monotonic() - started < 10
    carries_on(folders)


def test_the_resident_interpreter_cannot_be_read_through_proc(folders, sandboxed):
    run(folders, "pass")
    result = run(folders, """
        import os
        for what in ("mem", "environ", "fd"):
            try:
                os.listdir(f"/proc/{os.getppid()}/fd") if what == "fd" else open(f"/proc/{os.getppid()}/{what}", "rb").read(1)
                print(what, "open")
            except OSError as error:
                print(what, "refused", error.errno)
    """)
    assert result.exit_code == 0 and "open" not in result.output, result.output


def test_a_script_past_its_time_limit_is_stopped_and_the_next_runs(folders, sandboxed):
    run(folders, "pass")
    result = run(folders, "import time; time.sleep(60)", timeout_s=1.0)
    assert result.timed_out and result.wall_s < 10
    carries_on(folders)


def test_a_fork_bomb_in_a_resident_sandbox_ends_at_its_budget(folders, sandboxed):
    run(folders, "pass", max_processes=32)
    result = run(folders, """
        import os, time
        while True:
            try:
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
            except OSError:
                time.sleep(0.01)
    """, max_processes=32, timeout_s=20)
    assert result.exit_code is None and "process budget" in result.killed_reason
    carries_on(folders)


def test_a_memory_bomb_in_a_resident_sandbox_is_stopped(folders, sandboxed):
    run(folders, "pass", memory_bytes=256 * MiB)
    result = run(folders, """
        blocks = []
        while True:
            blocks.append(bytearray(16 << 20))
    """, memory_bytes=256 * MiB, timeout_s=30)
    assert result.out_of_memory
    carries_on(folders)


def test_the_resident_interpreter_refuses_to_run_outside_a_pid_namespace(tmp_path):
    """Its clean-up kills every other process it can signal: outside a namespace of its own that
    would be the user's, so it must not even start there."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    done = subprocess.run([sys.executable, "-c", resident.RESIDENT_MAIN.read_text(), str(theirs.fileno())],
                          pass_fds=(theirs.fileno(),), capture_output=True, text=True, timeout=30, cwd=tmp_path)
    theirs.close()
    ours.close()
    assert done.returncode == 120 and "fresh PID namespace" in done.stderr


def test_with_every_sandbox_started_on_demand_none_is_kept(folders, sandboxed, monkeypatch):
    monkeypatch.setenv("MLAB_SANDBOX_COLD", "1")
    assert [pid_of(run(folders, "import os; print('PID', os.getpid())")) for _ in range(2)] == [2, 2]
