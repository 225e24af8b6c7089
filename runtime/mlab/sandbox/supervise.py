"""Watching one launched script: output, time, memory and process count, then the kill.

The launcher (sandbox/launcher.py) is the harness's child (beside, per thread that runs
scripts, one idle launcher started ahead for the next script: mlab.sandbox.warm); everything the
script starts is its descendant (bubblewrap's PID namespace or the launcher's
subreaper keep even setsid() grandchildren in the tree). The harness reads the
combined output as it comes, samples the tree every WATCH_INTERVAL_S, kills the
tree at a limit, and reaps the launcher with wait4 for the kernel's CPU account.

The limits it watches: the wall clock; the tree's memory; its process budget
(the tree's tasks reaching it, or the cgroup's count of refused forks); the
workspace's disk use; and the sandbox's init, which must keep reaping (a
stopped init, or one still there after every script process ended, would
otherwise hold the run until its time limit).
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass

from mlab.sandbox import proc as sandbox_proc
from mlab.sandbox import warm
from mlab.sandbox.cgroup import ScriptCgroup, ScriptCgroupV1
from mlab.sandbox.disk import DiskWatch
from mlab.sandbox.output import OutputCollector

LAUNCHER = warm.LAUNCHER
WATCH_INTERVAL_S = 0.05
SPARE_INIT_S = 0.5    # how long bubblewrap and its init may outlive the killed script
KILL_GRACE_S = 2.0
DRAIN_AFTER_EXIT_S = 2.0
INIT_ALONE_S = 2.0    # how long the sandbox's init may live on once no script process is left
PROPORTIONAL_BUDGET_S = 0.2   # the most one proportional memory count may take
ESCALATE_S = SPARE_INIT_S   # a tree still alive this long after the kill gets the kill that cannot be outrun
HARD_DEADLINE_S = 8.0   # the watch returns this long after the time limit, whatever the tree does
READ_BYTES = 1 << 20


@dataclass
class Limits:
    """What the watchdog enforces (None: not enforced)."""

    timeout_s: float
    memory_bytes: int | None
    max_processes: int | None              # tasks (processes and threads) of the script's tree
    scratch_mounts: tuple[str, ...] = ()   # sandbox tmpfs whose RAM counts as the tree's
    disk: DiskWatch | None = None
    stop: object | None = None                 # a threading.Event: set, the script is ended ("stopped")


@dataclass
class Supervision:
    """What was measured about one launched script."""

    exit_code: int | None
    killed_reason: str | None
    started: bool
    wall_s: float
    cpu_s: float
    peak_memory_bytes: int


class StatusReader:
    """Parses the JSON documents that the launcher and bubblewrap write on the status fd."""

    def __init__(self) -> None:
        self.buffer = ""
        self.facts: dict = {}

    def feed(self, data: bytes) -> None:
        self.buffer += data.decode("utf-8", "replace")
        decoder = json.JSONDecoder()
        while True:
            text = self.buffer.lstrip()
            if not text:
                self.buffer = ""
                return
            try:
                document, end = decoder.raw_decode(text)
            except ValueError:
                self.buffer = text
                return
            self.buffer = text[end:]
            if isinstance(document, dict):
                self.facts.update(document)


class TreeWatch:
    """Samples the memory and size of the script's process tree (the launcher left out).

    Memory is anonymous memory (what the script allocated, not its mapped
    libraries) plus the files in the sandbox's tmpfs. With one script process
    the cheap count from statm is exact. With several, statm counts every page
    a fork shares copy-on-write once per process (a parent holding a 4 GiB
    dataset and four data-loader workers would count 20 GiB), so the
    proportional count from smaps_rollup, which splits shared pages, is taken
    instead. It walks page tables, so it is taken no more often than its own
    cost allows: when the cheap count says the limit may be crossed, and now
    and then for the peak.
    """

    def __init__(self, root_pid: int, scratch_mounts: tuple[str, ...], facts: dict,
                 spare_depth: int) -> None:
        self.root_pid = root_pid
        self.scratch_mounts = scratch_mounts
        self.facts = facts     # bubblewrap's status: "child-pid" is a process inside the sandbox
        self.spare_depth = spare_depth
        self.peak_bytes = 0
        self.next_proportional = 0.0
        self.next_urgent = 0.0
        self.init_states: list[str] = []   # of the sandbox's init, in the last sample
        self.script_seen = False
        self.script_alive = False

    def sample(self, now: float, limit: int | None, stop=lambda: False) -> tuple[int | None, int]:
        """(bytes in use now or None when not measured this time, tasks of the script).

        stop(): whether to give up the proportional count (a limit was reached meanwhile). Its reads
        wait on each process's memory map, which a fork bomb holds at every fork (refused ones
        too), so the count also ends after PROPORTIONAL_BUDGET_S and the sample says "not measured".
        """
        tree = sandbox_proc.list_descendants(self.root_pid)
        pids = [entry.pid for entry in tree]
        script = [entry for entry in tree if entry.depth > self.spare_depth]
        tasks = sum(entry.threads for entry in script)
        self.script_alive = bool(script)
        self.script_seen = self.script_seen or self.script_alive
        self.init_states = [entry.state for entry in tree
                            if self.spare_depth and entry.depth == self.spare_depth]
        scratch = self._scratch_bytes()
        used: int | None = sum(map(sandbox_proc.private_memory_bytes, pids)) + scratch
        over = limit is not None and used > limit
        if len(script) > 1:
            if now >= self.next_proportional or (over and now >= self.next_urgent):
                started = time.perf_counter()
                used = scratch
                for pid in pids:
                    if stop() or time.perf_counter() - started > PROPORTIONAL_BUDGET_S:
                        used = None
                        break
                    used += sandbox_proc.proportional_anonymous_bytes(pid)
                cost = time.perf_counter() - started
                self.next_proportional = now + max(0.25, 50 * cost)
                self.next_urgent = now + max(WATCH_INTERVAL_S, 5 * cost)
            else:
                used = None
        if used is not None:
            self.peak_bytes = max(self.peak_bytes, used)
        return used, tasks

    def _scratch_bytes(self) -> int:
        # Files in the sandbox's tmpfs live in RAM without belonging to any process.
        if not self.scratch_mounts or "child-pid" not in self.facts:
            return 0
        total = 0
        for mount in self.scratch_mounts:
            try:
                info = os.statvfs(f"/proc/{int(self.facts['child-pid'])}/root{mount}")
            except OSError:
                continue
            total += (info.f_blocks - info.f_bfree) * info.f_frsize
        return total


def _exit_code_of(wait_status: int) -> int:
    if os.WIFSIGNALED(wait_status):
        return 128 + os.WTERMSIG(wait_status)
    return os.waitstatus_to_exitcode(wait_status)


def supervise(config: dict, limits: Limits, collector: OutputCollector,
              cgroup: ScriptCgroup | ScriptCgroupV1 | None = None) -> Supervision:
    """Launch the script described by config and watch it to the end (in cgroup if given)."""
    config = {**config, "parent_pid": os.getpid(),
              "cgroup_procs": cgroup.procs_files if cgroup else [],
              "cgroup_optional_procs": cgroup.optional_procs_files if cgroup else [],
              "cgroup_budgets_tasks": bool(cgroup and cgroup.budgets_tasks)}
    launched = warm.take_launcher()
    started_at = time.monotonic()
    try:
        launched.send(config)
    except OSError:   # a launcher started ahead that is gone: one started now
        launched.discard()
        launched = warm.start_launcher()
        launched.send(config)
    launcher, out_read, status_read = launched.process, launched.out_read, launched.status_read
    run = ScriptWatch(launcher, out_read, status_read, limits, collector, started_at)
    run.start_reported = config.get("start_reported", True)
    if config.get("own_uid") and config.get("uid") is not None:
        run.own_uid = (config["uid"], config["gid"])
    run.cgroup = cgroup
    # Under the launcher: bubblewrap, then its PID-namespace init, then the script.
    run.spare_depth = 2 if config["mode"] == "bwrap" else 0
    run.watch_tree = TreeWatch(launcher.pid, limits.scratch_mounts, run.status.facts, run.spare_depth)
    try:
        warm.start_next()   # the next script of this thread finds its launcher started
        return run.watch()
    finally:
        run.close()


class ScriptWatch:
    """The watch loop over one launcher."""

    def __init__(self, launcher: subprocess.Popen, out_fd: int, status_fd: int, limits: Limits,
                 collector: OutputCollector, started_at: float) -> None:
        self.launcher = launcher
        self.out_fd = out_fd
        self.status_fd = status_fd
        self.limits = limits
        self.collector = collector
        self.started_at = started_at
        self.status = StatusReader()
        self.start_reported = True
        self.cgroup: ScriptCgroup | ScriptCgroupV1 | None = None
        self.spare_depth = 0
        self.watch_tree: TreeWatch | None = None
        self.killed_reason: str | None = None
        self.killed_at = 0.0
        self.init_alone_since: float | None = None
        self.own_uid: tuple[int, int] | None = None   # (uid, gid) that only this script runs as
        self.uid_killed = False
        self.wait_result: tuple[int, int, object] | None = None
        try:
            self.pidfd: int | None = os.pidfd_open(launcher.pid)
        except OSError:
            self.pidfd = None

    def watch(self) -> Supervision:
        deadline = self.started_at + self.limits.timeout_s
        hard_deadline = deadline + HARD_DEADLINE_S
        next_sample = self.started_at
        exited_at = None
        open_fds = {self.out_fd, self.status_fd}
        while True:
            now = time.monotonic()
            if now >= hard_deadline:
                # Nothing a script does keeps the harness: not a launcher that cannot be reaped,
                # not pipes that orphans hold open. What is left is killed again in close().
                self.killed_reason = self.killed_reason or "timeout"
                break
            if self.wait_result is None and now >= next_sample:
                next_sample = now + WATCH_INTERVAL_S
                self._check_limits(now, deadline)
            if self.wait_result is None:
                self._reap(nohang=True)
                if self.wait_result is not None:
                    exited_at = time.monotonic()
            if self.wait_result is not None and (not open_fds or now - exited_at > DRAIN_AFTER_EXIT_S):
                break
            waiting = [*open_fds] + ([self.pidfd] if self.pidfd is not None and self.wait_result is None else [])
            pause = max(0.0, min(next_sample - now, deadline - now)) if self.wait_result is None else 0.1
            ready, _, _ = select.select(waiting, [], [], pause)
            for fd in ready:
                if fd in open_fds and not self._read(fd):
                    open_fds.discard(fd)
        return self._outcome()

    def _read(self, fd: int) -> bool:
        """Read what fd has; False at end of file."""
        data = os.read(fd, READ_BYTES)
        if not data:
            return False
        if fd == self.out_fd:
            self.collector.add_bytes(data)
        else:
            self.status.feed(data)
        return True

    def _check_limits(self, now: float, deadline: float) -> None:
        if self.killed_reason is not None:
            self._kill(now)
            return
        # The cheap checks first: a fork bomb starves the harness of CPU and makes /proc slow to
        # read, so neither the deadline nor the kernel's count of refused forks waits for a sample.
        if now >= deadline:
            self._kill(now, "timeout")
            return
        budget = self.limits.max_processes is not None and self._in_cgroup()
        if budget and self.cgroup.budget_reached():
            self._kill(now, "processes")
            return
        used, tasks = self.watch_tree.sample(now, self.limits.memory_bytes,
                                             stop=lambda: budget and self.cgroup.budget_reached())
        if budget and self.cgroup.budget_reached():
            self._kill(now, "processes")
        elif self.limits.memory_bytes is not None and used is not None and used > self.limits.memory_bytes:
            self._kill(now, "memory")
        elif self.limits.max_processes is not None and tasks >= self.limits.max_processes:
            self._kill(now, "processes")
        elif self.limits.disk is not None and self.limits.disk.over(now):
            self._kill(now, "disk")
        elif self._init_stuck(now):
            self._kill(now, "init")
        elif self.limits.stop is not None and self.limits.stop.is_set():
            self._kill(now, "stopped")

    def _init_stuck(self, now: float) -> bool:
        """Whether the sandbox's init is stopped, or lives on alone: it would never end the run."""
        states = self.watch_tree.init_states
        if any(state in "Tt" for state in states):
            return True
        alone = bool(states) and self.watch_tree.script_seen and not self.watch_tree.script_alive
        if not alone:
            self.init_alone_since = None
            return False
        if self.init_alone_since is None:
            self.init_alone_since = now
        return now - self.init_alone_since > INIT_ALONE_S

    def _kill(self, now: float, reason: str | None = None) -> None:
        if reason is not None and self.killed_reason is None:
            self.killed_reason = reason
            self.killed_at = now
        # First the script's processes only, so that bubblewrap's init reaps them
        # (keeping their CPU time in the account) and ends by itself; then all. A fork bomb
        # (or a tree still there ESCALATE_S on) gets the kill that cannot be outrun at once:
        # its cgroup frozen and killed, its uid's processes killed in one kill(-1), and the
        # rest of the tree stopped before it is killed, so that nothing forks while it dies.
        escalate = self.killed_reason == "processes" or now - self.killed_at >= ESCALATE_S
        spare = self.spare_depth if now - self.killed_at < SPARE_INIT_S and not escalate else 0
        if self._in_cgroup() and (self.cgroup.keeps_cpu_account or escalate):
            spare = 0
            self.cgroup.kill()   # the cgroup keeps the account whoever reaps
        if escalate and self.own_uid is not None and not self.uid_killed:
            self.uid_killed = True
            sandbox_proc.kill_user(*self.own_uid)
        if escalate:
            sandbox_proc.stop_descendants(self.launcher.pid, spare_depth=spare)
        sandbox_proc.kill_descendants(self.launcher.pid, spare_depth=spare, attempts=20)
        if now - self.killed_at > KILL_GRACE_S:
            # The launcher ends by itself once its tree is gone; this is the backstop.
            self._signal_launcher(signal.SIGKILL)

    def _in_cgroup(self) -> bool:
        return self.cgroup is not None and "cgroup-failed" not in self.status.facts

    def _signal_launcher(self, sig: int) -> None:
        if self.wait_result is None:
            try:
                os.kill(self.launcher.pid, sig)
            except ProcessLookupError:
                pass

    def _reap(self, nohang: bool) -> None:
        pid, wait_status, usage = os.wait4(self.launcher.pid, os.WNOHANG if nohang else 0)
        if pid == self.launcher.pid:
            self.wait_result = (pid, wait_status, usage)
            self.launcher.returncode = _exit_code_of(wait_status)

    def _outcome(self) -> Supervision:
        if self.wait_result is None:   # given up at the hard deadline: no account from the kernel
            return Supervision(exit_code=None, killed_reason=self.killed_reason, started=True,
                               wall_s=time.monotonic() - self.started_at, cpu_s=0.0,
                               peak_memory_bytes=self.watch_tree.peak_bytes)
        _, wait_status, usage = self.wait_result
        facts = self.status.facts
        # The launcher's own account leaves out its overhead; wait4's is the fallback.
        cpu_s = float(facts.get("tree-cpu-s", usage.ru_utime + usage.ru_stime))
        maxrss_kib = int(facts.get("tree-maxrss-kib", usage.ru_maxrss))
        exit_code = facts.get("exit-code", _exit_code_of(wait_status))
        # Without --json-status-fd support bubblewrap cannot say that the script started.
        started = "child-pid" in facts or not self.start_reported
        peak = max(self.watch_tree.peak_bytes, maxrss_kib * 1024)
        killed_reason = self.killed_reason
        if self._in_cgroup():
            account = self.cgroup.usage()
            cpu_s = account.cpu_s if account.cpu_s is not None else cpu_s
            peak = account.peak_memory_bytes or peak
            if account.oom_kills and killed_reason is None:
                killed_reason = "memory"   # the kernel enforced memory.max
        if killed_reason is None and not started:
            killed_reason = "sandbox_failed"
        return Supervision(
            exit_code=None if killed_reason else int(exit_code),
            killed_reason=killed_reason,
            started=started,
            wall_s=time.monotonic() - self.started_at,
            cpu_s=cpu_s,
            peak_memory_bytes=peak,
        )

    def close(self) -> None:
        """Leave nothing behind, even when the watch ended with an exception."""
        if self.wait_result is None:
            if self._in_cgroup():
                self.cgroup.kill()
            sandbox_proc.stop_descendants(self.launcher.pid)
            sandbox_proc.kill_descendants(self.launcher.pid)
            self._signal_launcher(signal.SIGKILL)
            until = time.monotonic() + KILL_GRACE_S   # a launcher stuck in the kernel is not waited for
            while self.wait_result is None and time.monotonic() < until:
                self._reap(nohang=True)
                time.sleep(0.01)
        for fd in (self.out_fd, self.status_fd, self.pidfd):
            if fd is not None:
                os.close(fd)
