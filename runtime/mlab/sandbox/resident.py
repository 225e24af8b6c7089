"""Resident sandboxes: one bubblewrap sandbox per thread and workspace, kept for the scripts that
follow, each started by a fork of an interpreter already running inside it.

A tree search runs many short scripts, one per node, each in the same folder of its thread (the
node's copy of its parent's workspace is put there). A fresh sandbox per script costs three
program starts (the launcher, bubblewrap, the script's interpreter) before the script's first
line, more than a short script itself. A resident sandbox is started once, with the same
launcher, bubblewrap command, uid, cgroup, limits and environment as a fresh one would have, and
runs sandbox/resident_main.py: each script is then a fork of that interpreter, with its own
output and status pipes. What a fresh sandbox gives each script, the resident one
gives each too: the workspace as the harness put it there, an empty /tmp and /dev/shm and no
IPC objects (cleaned after every script), no process of an earlier script (all killed when
the script's own process ends), the time limit from its own start, the memory, process and disk
watch of mlab.sandbox.supervise over its own processes, and the kernel's account of their CPU
time.

A resident is used only for a script whose sandbox would be the same: the key holds the
workspace (and its folder's identity), the interpreter, the environment, every limit and
mount, and the identity of each read-only file, which is bound read-only at the start and must
stay the same file. Any other script, and every script when MLAB_SANDBOX_COLD is set, gets a
fresh sandbox. A resident is ended, and the next script gets a fresh one, after a script that
was killed (a limit, a stop), when it cannot clean up, and when its interpreter dies or stops
(which a script, running as the same uid, can do to it).
"""
from __future__ import annotations

import array
import atexit
import fcntl
import marshal
import os
import select
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from mlab.sandbox import proc as sandbox_proc
from mlab.sandbox import warm
from mlab.sandbox.supervise import Limits, ScriptWatch, StatusReader, Supervision, TreeWatch

RESIDENT_MAIN = Path(__file__).with_name("resident_main.py")
RESIDENT_TASKS = 3     # bubblewrap, its init and the resident interpreter: in the cgroup beside the script
START_WAIT_S = 30.0    # how long a resident's interpreter may take to say it is ready
SPARE_DEPTH = 3        # under the launcher: bubblewrap, its init, the resident interpreter; scripts below


@dataclass
class Resident:
    """One started resident sandbox: its launcher, the control socket, and what it holds."""

    key: tuple
    launched: warm.Launched
    control: socket.socket
    lease: object          # the UidLease its scripts run as
    cgroup: object | None  # the cgroup it runs in (ScriptCgroup or ScriptCgroupV1)
    scratch_mounts: tuple[str, ...]
    uid: int | None
    gid: int | None
    own_uid: bool
    reports: StatusReader = field(default_factory=StatusReader)   # the launcher's and bubblewrap's
    ready: bool = False   # the interpreter said it waits for a script (it does after cleaning up)
    closed: bool = False

    def alive(self) -> bool:
        return not self.closed and self.launched.process.poll() is None

    def run(self, go: dict, limits: Limits, collector) -> Supervision | None:
        """Run one script; None when the sandbox was gone before it could start (run it fresh)."""
        if not self.alive() or not (self.ready or _wait_ready(self)):
            return None
        self.ready = False
        out_read, out_write = os.pipe()
        status_read, status_write = os.pipe()
        try:
            fcntl.fcntl(out_read, fcntl.F_SETPIPE_SZ, warm.PIPE_BYTES)
        except OSError:
            pass
        before = self.cgroup.usage() if self.cgroup is not None else None
        started_at = time.monotonic()
        try:
            self.control.sendmsg([marshal.dumps(go)], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                                        array.array("i", [out_write, status_write]))])
        except OSError:
            for fd in (out_read, status_read):
                os.close(fd)
            return None
        finally:
            os.close(out_write)
            os.close(status_write)
        watch = _ResidentWatch(self, out_read, status_read, limits, collector, started_at, before)
        try:
            outcome = watch.watch()
        finally:
            watch.close()
        if outcome.killed_reason is not None:
            self.close()   # (a script not seen to its end has closed it already)
        return outcome

    def close(self) -> None:
        """End the sandbox and give back its uid and cgroup."""
        if self.closed:
            return
        self.closed = True
        try:
            self.control.close()   # the interpreter reads end of file and exits
        except OSError:
            pass
        process = self.launched.process
        try:
            process.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            pass   # what is left is killed below
        if process.poll() is None:
            if self.cgroup is not None:
                self.cgroup.kill()
            sandbox_proc.stop_descendants(process.pid)
            sandbox_proc.kill_descendants(process.pid)
            process.kill()
            process.wait()
        if self.own_uid and self.uid is not None:
            sandbox_proc.kill_user(self.uid, self.gid)
        for fd in (self.launched.out_read, self.launched.status_read):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.cgroup is not None:
            self.cgroup.remove()
        self.lease.release()


class _ResidentWatch(ScriptWatch):
    """The watch of one script in a resident sandbox: it ends with the interpreter's report on
    the script's status pipe (or with the sandbox's end), not with the launcher's exit."""

    def __init__(self, resident: Resident, out_fd: int, status_fd: int, limits: Limits, collector,
                 started_at: float, before) -> None:
        super().__init__(resident.launched.process, out_fd, status_fd, limits, collector, started_at)
        self.resident = resident
        self.before = before
        self.done = False
        self.cgroup = resident.cgroup
        self.spare_depth = SPARE_DEPTH
        if resident.own_uid:
            self.own_uid = (resident.uid, resident.gid)
        if "child-pid" in resident.reports.facts:   # a process inside the sandbox, for its /tmp
            self.status.facts["child-pid"] = resident.reports.facts["child-pid"]
        self.watch_tree = TreeWatch(self.launcher.pid, resident.scratch_mounts, self.status.facts, SPARE_DEPTH)

    def _reap(self, nohang: bool) -> None:
        if "exit-code" in self.status.facts:
            self.done = True
            self.wait_result = (self.launcher.pid, 0, None)
        elif self.launcher.poll() is not None:   # the sandbox ended under the script
            self.wait_result = (self.launcher.pid, 0, None)

    def _outcome(self) -> Supervision:
        wall_s = time.monotonic() - self.started_at
        facts = self.status.facts
        killed_reason = self.killed_reason
        if not self.done and killed_reason is None:
            killed_reason = "init"   # the interpreter that runs the scripts died or was killed
        cpu_s = float(facts.get("tree-cpu-s", 0.0))
        peak = max(self.watch_tree.peak_bytes, int(facts.get("tree-maxrss-kib", 0)) * 1024)
        if self._in_cgroup() and self.before is not None:
            account = self.cgroup.usage()
            if account.oom_kills > self.before.oom_kills and killed_reason is None:
                killed_reason = "memory"
            if not self.done and account.cpu_s is not None and self.before.cpu_s is not None:
                cpu_s = account.cpu_s - self.before.cpu_s
        return Supervision(exit_code=None if killed_reason else int(facts.get("exit-code", 1)),
                           killed_reason=killed_reason, started=True, wall_s=wall_s, cpu_s=cpu_s,
                           peak_memory_bytes=peak)

    def close(self) -> None:
        if not self.done:
            self.resident.close()   # also what is left of the script
        for fd in (self.out_fd, self.status_fd, self.pidfd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.out_fd = self.status_fd = self.pidfd = None


def start(key: tuple, config: dict, lease, cgroup, scratch_mounts: tuple[str, ...]) -> Resident | None:
    """Start a resident sandbox from a fresh sandbox's configuration (its argv is replaced by the
    resident interpreter); None when it does not come up (the caller runs the script fresh)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        launched = warm.start_launcher(extra_fds=(theirs.fileno(),))
    except OSError:
        ours.close()
        return None
    finally:
        theirs.close()
    python = config["argv"][0]
    # the control socket has the same number in the launcher, and so in the sandbox
    config = {**config, "argv": [python, "-c", RESIDENT_MAIN.read_text(), str(launched.extra_fds[0])],
              "parent_pid": os.getpid(), "handed_fds": list(launched.extra_fds),
              "cgroup_procs": cgroup.procs_files if cgroup else [],
              "cgroup_optional_procs": cgroup.optional_procs_files if cgroup else [],
              "cgroup_budgets_tasks": bool(cgroup and cgroup.budgets_tasks)}
    resident = Resident(key, launched, ours, lease, cgroup, scratch_mounts, config.get("uid"), config.get("gid"),
                        bool(config.get("own_uid")))
    try:
        launched.send(config)
    except OSError:
        resident.close()
        return None
    if not _wait_ready(resident):
        resident.close()
        return None
    return resident


def _wait_ready(resident: Resident) -> bool:
    """Wait until the interpreter says it is ready (started, or done cleaning up after a script);
    meanwhile read bubblewrap's report of its child. False when it is gone instead."""
    deadline = time.monotonic() + START_WAIT_S
    while time.monotonic() < deadline:
        ready, _, _ = select.select([resident.control, resident.launched.status_read], [], [],
                                    max(0.0, deadline - time.monotonic()))
        if resident.launched.status_read in ready:
            chunk = os.read(resident.launched.status_read, 1 << 16)
            if not chunk:
                return False   # bubblewrap and the launcher are gone
            resident.reports.feed(chunk)
        if resident.control in ready:
            try:
                resident.ready = resident.control.recv(16) == b"ready"
            except OSError:
                resident.ready = False
            return resident.ready
    return False


# -- this thread's resident sandboxes ------------------------------------------------------------
_lock = threading.Lock()
_residents: dict[tuple[int, str], Resident] = {}


def take(key: tuple, workspace: str) -> Resident | None:
    """This thread's resident sandbox for the workspace if it has the key, else None (one with
    another key, or dead, is closed)."""
    with _lock:
        resident = _residents.get((threading.get_ident(), workspace))
    if resident is None:
        return None
    if resident.key == key and resident.alive():
        return resident
    forget(resident)
    return None


def keep(resident: Resident, workspace: str) -> None:
    with _lock:
        _residents[(threading.get_ident(), workspace)] = resident


def forget(resident: Resident) -> None:
    """Close a resident and drop it from the table."""
    with _lock:
        for where, known in list(_residents.items()):
            if known is resident:
                del _residents[where]
    resident.close()


def release(under: str | os.PathLike | None = None) -> None:
    """Close the resident sandboxes of every thread (of workspaces under `under`, if given)."""
    prefix = None if under is None else os.path.realpath(under).rstrip("/") + "/"
    with _lock:
        chosen = [(where, r) for where, r in _residents.items()
                  if prefix is None or (where[1] + "/").startswith(prefix)]
        for where, _ in chosen:
            del _residents[where]
    for _, resident in chosen:
        resident.close()


def _forget_in_child() -> None:
    """In a forked child (mlab scores a run in one): the parent's residents are not its own. Its
    copies of their descriptors are closed (a control socket held here would keep a resident
    from seeing its end), and nothing here may end them."""
    for known in _residents.values():
        known.closed = True
        for fd in (known.control.detach(), known.launched.out_read, known.launched.status_read):
            try:
                os.close(fd)
            except OSError:
                pass
        known.launched.process.returncode = 0   # not this process's child: nothing here may wait for it
    _residents.clear()


os.register_at_fork(after_in_child=_forget_in_child)
atexit.register(release)
