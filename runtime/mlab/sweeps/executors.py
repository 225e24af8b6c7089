"""What the sweep asks of an executor, and what both executors share.

An executor starts runs (each one `mlab run` process, new or `--resume`), says when they end
and how, and stops them when the sweep is interrupted. The sweep decides what to run, in what
order and what an ending means (finished, resumable, failed).
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from mlab.sweeps.state import Work

PR_SET_PDEATHSIG = 1


@dataclass
class Attempt:
    """One process of one run: started by an executor, ended once."""

    work: Work
    log: Path
    run_name: str | None = None  # the run folder under runs/: known at once for a resume
    devices: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    @property
    def key(self) -> str:
        return self.work.spec.key


@dataclass
class Ended:
    """How an attempt ended: the process's exit code, or lost with its worker (exit_code None)."""

    attempt: Attempt
    exit_code: int | None
    lost: bool = False
    message: str | None = None


class Executor:
    """The interface the sweep drives."""

    name = "executor"

    def has_room(self) -> bool:
        """Whether a worker is free (a run may still wait for its devices)."""
        return True

    def try_start(self, work: Work) -> Attempt | None:
        """Start the run if a worker (and its devices) is free now; None if it must wait."""
        raise NotImplementedError

    def poll(self, timeout_s: float) -> list[Ended]:
        """Attempts that ended, waiting at most timeout_s for one."""
        raise NotImplementedError

    def running(self) -> list[Attempt]:
        raise NotImplementedError

    def stop(self, hard: bool) -> None:
        """Stop the runs: after their current step (hard=False) or at once; both leave them resumable."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what the executor holds (called once, when the sweep ends)."""


def mlab_command(arguments: list[str]) -> list[str]:
    """The command line of an `mlab` process in this interpreter."""
    return [sys.executable, "-m", "mlab.cli", *arguments]


def resume_arguments(run_dir: Path) -> list[str]:
    return ["run", "--resume", str(run_dir), "--plain"]


def _prctl():
    """libc's prctl, looked up once in the parent (a forked child of a threaded sweep should not
    load libraries), or None where there is none (not Linux)."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _prctl()


def die_with_parent(parent_pid: int) -> None:
    """In a child before exec (`preexec_fn=functools.partial(die_with_parent, os.getpid())`): be
    killed when the process that started it dies, so that a killed sweep (or Ray worker) leaves no
    run behind that still holds its run folder. A parent that died between the fork and this
    request sends no signal, so the child then leaves at once; without prctl (not Linux) a leftover
    run ends by itself and a later sweep waits for its lock."""
    if _PRCTL is not None:
        _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent_pid:
            os._exit(125)
    os.setsid()  # its own process group, so a Ctrl-C at the terminal reaches the sweep only


def last_message(log: Path, limit: int = 20000) -> str | None:
    """The line of a run's log that says why it failed (an `mlab:` error, else the last line)."""
    try:
        with open(log, "rb") as handle:
            handle.seek(max(log.stat().st_size - limit, 0))
            lines = [ln.strip() for ln in handle.read().decode("utf-8", "replace").splitlines() if ln.strip()]
    except OSError:
        return None
    errors = [ln for ln in lines if ln.startswith("mlab:") or "Error" in ln.split(":")[0]]
    return (errors or lines or [None])[-1]
