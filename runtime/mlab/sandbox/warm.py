"""Launchers started ahead of their script, one per thread that runs scripts.

Starting the launcher (an interpreter, then its imports) is the first part of every script's
start. So once a thread has run a script, the next launcher is started while that script
runs and waits, idle and unconfigured, until the next script of the same thread hands it its
configuration over a pipe (in marshal's format, which the launcher reads without importing
json). It is the same program with the same privileges as a launcher started on demand: it reads nothing before its configuration, then does exactly what a fresh
launcher does (its stdin becomes /dev/null again before anything else runs). Until then it
has joined no cgroup, set no limit and started nothing; when the harness ends (or the thread
that started it does) the pipe closes and it exits.

The launcher stays per thread because its parent-death signal follows the thread that started
it: a launcher started by one thread and used by another would be killed when the first ends.
"""
from __future__ import annotations

import fcntl
import marshal
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

LAUNCHER = str(Path(__file__).with_name("launcher.py"))
PIPE_BYTES = 1 << 20
COLD_VARIABLE = "MLAB_SANDBOX_COLD"   # set (to anything): every launcher is started on demand


@dataclass
class Launched:
    """A launcher process and the harness's ends of its pipes."""

    process: subprocess.Popen
    out_read: int      # the script's combined output
    status_read: int   # the launcher's and bubblewrap's JSON status documents
    status_fd: int     # the status pipe's number in the launcher
    config_write: int | None   # where its configuration goes; None once sent

    def send(self, config: dict) -> None:
        """Hand the launcher its configuration; it starts the script at once."""
        data = marshal.dumps({**config, "status_fd": self.status_fd})
        try:
            while data:
                data = data[os.write(self.config_write, data):]
        finally:
            os.close(self.config_write)
            self.config_write = None

    def discard(self) -> None:
        """Close a launcher that was never used: it reads end of file and exits."""
        for fd in (self.config_write, self.out_read, self.status_read):
            if fd is not None:
                os.close(fd)
        self.config_write = None
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __del__(self):  # dropped unused (its thread ended): it goes too
        if self.config_write is not None:
            self.discard()


def start_launcher() -> Launched:
    """Start a launcher that waits for its configuration on stdin."""
    out_read, out_write = os.pipe()
    status_read, status_write = os.pipe()
    config_read, config_write = os.pipe()
    try:
        fcntl.fcntl(out_read, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except OSError:
        pass  # a smaller pipe only means more reads
    try:
        process = subprocess.Popen(
            [sys.executable, "-I", "-S", LAUNCHER], stdin=config_read, stdout=out_write, stderr=out_write,
            pass_fds=(status_write,), start_new_session=True, cwd="/", env={})
    except BaseException:
        for fd in (out_read, status_read, config_write):
            os.close(fd)
        raise
    finally:
        for fd in (out_write, status_write, config_read):
            os.close(fd)
    return Launched(process, out_read, status_read, status_write, config_write)



class _Ready(threading.local):
    launched: Launched | None = None


_ready = _Ready()


def _forget_in_child() -> None:
    """In a forked child (mlab scores a run in one): the parent's idle launcher is not its own."""
    launched, _ready.launched = _ready.launched, None
    if launched is None:
        return
    for fd in (launched.config_write, launched.out_read, launched.status_read):
        try:
            os.close(fd)   # this process's copies; the parent keeps its own
        except OSError:
            pass
    launched.config_write = None
    launched.process.returncode = 0   # not this process's child: nothing here may wait for it


os.register_at_fork(after_in_child=_forget_in_child)


def take_launcher() -> Launched:
    """This thread's idle launcher if it has one still alive, else a new one."""
    launched, _ready.launched = _ready.launched, None
    if launched is not None and launched.process.poll() is None:
        return launched
    if launched is not None:
        launched.discard()
    return start_launcher()


def start_next() -> None:
    """Start this thread's next launcher now, while the current script runs."""
    if os.environ.get(COLD_VARIABLE) or _ready.launched is not None:
        return
    try:
        _ready.launched = start_launcher()
    except OSError:
        _ready.launched = None   # the next script starts its launcher itself


def release() -> None:
    """Close this thread's idle launcher, if any."""
    launched, _ready.launched = _ready.launched, None
    if launched is not None:
        launched.discard()
