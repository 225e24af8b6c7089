"""Process-tree helpers over /proc: descendants, their memory, task counts and killing.

Standard library only and no package-relative imports: the script launcher
(sandbox/launcher.py) imports this module by path, before any privilege drop.
"""
from __future__ import annotations

import os
import signal
import time
from collections import namedtuple

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def _read(path: str) -> str | None:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return None


def process_stat(pid: int) -> tuple[str, int, int, int] | None:
    """(state, parent pid, start time in clock ticks, threads) of pid, or None if it is gone."""
    text = _read(f"/proc/{pid}/stat")
    if not text:
        return None
    # The command name may hold spaces and parentheses: the fields start after the last ')'.
    fields = text[text.rfind(")") + 2:].split()
    try:
        return fields[0], int(fields[1]), int(fields[19]), int(fields[17])
    except (IndexError, ValueError):
        return None


# A living process below the root of a tree: pid, start_time, depth (1: a child of the root),
# state (as in /proc/PID/stat: R, S, D, T (stopped), t (traced), ...) and threads (its tasks: what
# RLIMIT_NPROC and pids.max count). A plain namedtuple: the launcher imports this module, and
# typing's NamedTuple would cost it typing's import.
Descendant = namedtuple("Descendant", "pid start_time depth state threads")


def _has_children_files() -> bool:
    pid = os.getpid()
    return os.path.exists(f"/proc/{pid}/task/{pid}/children")


_CHILDREN_FILES = _has_children_files()


def _children_from_files(pid: int) -> list[int]:
    children: list[int] = []
    try:
        thread_ids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return children
    # A child is listed under the thread that created it, so every thread is read.
    for tid in thread_ids:
        text = _read(f"/proc/{pid}/task/{tid}/children")
        if text:
            children.extend(int(word) for word in text.split())
    return children


def _children_by_scan() -> dict[int, list[int]]:
    by_parent: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            stat = process_stat(int(name))
            if stat:
                by_parent.setdefault(stat[1], []).append(int(name))
    return by_parent


def list_descendants(root_pid: int) -> list[Descendant]:
    """Living descendants of root_pid, parents before children.

    Depth 1 is a child of root_pid. Zombies are left out: they hold no memory
    and cannot be killed again.
    """
    by_parent = None if _CHILDREN_FILES else _children_by_scan()
    found: list[Descendant] = []
    seen = {root_pid}
    queue = [(root_pid, 0)]
    while queue:
        pid, depth = queue.pop(0)
        children = _children_from_files(pid) if by_parent is None else by_parent.get(pid, [])
        for child in children:
            if child in seen:
                continue
            seen.add(child)
            stat = process_stat(child)
            if stat is None:
                continue
            queue.append((child, depth + 1))
            if stat[0] not in "ZX":
                found.append(Descendant(child, stat[2], depth + 1, stat[0], stat[3]))
    return found


def private_memory_bytes(pid: int) -> int:
    """Resident memory of pid that is not backed by files (RSS minus shared pages)."""
    text = _read(f"/proc/{pid}/statm")
    if not text:
        return 0
    fields = text.split()
    try:
        return max(0, int(fields[1]) - int(fields[2])) * PAGE_SIZE
    except (IndexError, ValueError):
        return 0


def proportional_anonymous_bytes(pid: int) -> int:
    """pid's share of anonymous memory: a page shared by n processes counts 1/n."""
    text = _read(f"/proc/{pid}/smaps_rollup")
    if not text:
        return private_memory_bytes(pid)
    fields = {}
    for line in text.splitlines()[1:]:
        name, _, value = line.partition(":")
        parts = value.split()
        if parts and parts[0].isdigit():
            fields[name] = int(parts[0]) * 1024
    if "Pss_Anon" in fields:
        return fields["Pss_Anon"]
    if "Pss" in fields:   # kernels before 5.10 do not split Pss by kind
        return max(0, fields["Pss"] - fields.get("Pss_File", 0))
    return private_memory_bytes(pid)


def tasks_of_user(uid: int) -> int:
    """Number of tasks (threads included) whose real uid is uid: what RLIMIT_NPROC counts.

    Every process's status is read (a directory's owner is the effective uid, not the real one),
    so it is read as bytes and searched for its two fields: this runs before every script, over
    every process of the machine."""
    count = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fd = os.open(f"/proc/{name}/status", os.O_RDONLY)
        except OSError:
            continue
        try:
            data = os.read(fd, STATUS_BYTES)
        except OSError:
            continue
        finally:
            os.close(fd)
        if _status_field(data, b"\nUid:") == uid:
            count += _status_field(data, b"\nThreads:") or 1
    return count


STATUS_BYTES = 1 << 16   # /proc/PID/status is about 1.5 KiB, and is read whole at once


def _status_field(data: bytes, key: bytes) -> int | None:
    """The first number after key in a /proc/PID/status text (the real uid, for Uid:)."""
    start = data.find(key)
    if start < 0:
        return None
    end = data.find(b"\n", start + 1)
    parts = data[start + len(key):end if end >= 0 else len(data)].split()
    return int(parts[0]) if parts and parts[0].isdigit() else None


def _kill_exact(pid: int, start_time: int, sig: int = signal.SIGKILL) -> None:
    """Send sig (SIGKILL) to pid only if it is still the process that started at start_time.

    A pid file descriptor pins the process, so a pid recycled between listing and
    killing can never hit an unrelated process.
    """
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return
    try:
        stat = process_stat(pid)
        if stat is not None and stat[2] == start_time:
            signal.pidfd_send_signal(pidfd, sig)
    except OSError:
        pass
    finally:
        os.close(pidfd)


def stop_descendants(root_pid: int, spare_depth: int = 0, passes: int = 20) -> None:
    """SIGSTOP the descendants of root_pid deeper than spare_depth until a pass finds none running.

    A stopped process cannot fork, and unlike a killed one it keeps its slot under the process
    budget, so a fork bomb cannot refill what the kill frees: stopped first, then killed, it is
    gone in a few passes however fast it forks.
    """
    for _ in range(passes):
        running = [entry for entry in list_descendants(root_pid)
                   if entry.depth > spare_depth and entry.state not in "Tt"]
        if not running:
            return
        for entry in running:
            _kill_exact(entry.pid, entry.start_time, signal.SIGSTOP)


def kill_user(uid: int, gid: int) -> None:
    """SIGKILL every process of uid at once: kill(-1) sent as that uid reaches all its processes
    in one pass of the kernel, which no fork can outrun. Only for a uid that is the script's alone
    (one of the pool): a root harness's last word on a tree that may have left the watched one."""
    import subprocess

    try:
        subprocess.run(["/bin/sh", "-c", "kill -KILL -1"], user=uid, group=gid, extra_groups=[], cwd="/",
                       env={"PATH": "/usr/bin:/bin"}, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        pass


def kill_descendants(root_pid: int, spare_depth: int = 0, attempts: int = 200) -> bool:
    """SIGKILL the descendants of root_pid deeper than spare_depth until none is alive.

    Returns True when none is left. Killed processes cannot fork again, and the
    children they made in the meantime stay descendants (re-parented to a
    subreaper or to a PID namespace's init), so the next pass finds them.
    spare_depth lets a PID namespace's init (and bubblewrap above it) outlive
    the processes it reaps: a child reaped by its parent adds its CPU time to
    the parent's account, while children of an init that is itself killed are
    reaped by the kernel and their CPU time is lost.
    """
    def doomed() -> list[Descendant]:
        return [entry for entry in list_descendants(root_pid) if entry.depth > spare_depth]

    for _ in range(attempts):
        living = doomed()
        if not living:
            return True
        for entry in living:
            _kill_exact(entry.pid, entry.start_time)
        time.sleep(0.005)
    return not doomed()
