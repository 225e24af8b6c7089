"""Running an agent's script: limits always, a bubblewrap sandbox where available.

    result = run_script([policy.python, "train.py"], policy, on_output=trace.write)

Every script runs in its own session under a wall-clock limit, a memory limit
for its whole process tree, a process budget of its own (a cgroup's pids.max
where one can be made, and a uid of its own when mlab runs as root, so that
RLIMIT_NPROC counts per script), a disk limit on the workspace and an output
bound; at a limit the whole tree is killed, grandchildren that called setsid()
included, and everything is reaped. With bubblewrap the script also runs as an
unprivileged uid in fresh user, PID, IPC, UTS and network namespaces, under a
seccomp filter that refuses ptrace (see sandbox/seccomp.py), sees the
system and its interpreter read-only, the workspace read-write and nothing of
mlab itself: not the source tree, not the installed packages and their task
data (the bundled lite data holds answers), not private/ folders, other runs or
the data cache. Without bubblewrap mlab says so once, loudly, and still applies
the limits. Wall time, CPU seconds and peak memory are measured for the tree.
"""
from __future__ import annotations

import functools
import importlib.util
import logging
import os
import shutil
import stat
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from mlab.sandbox import proc as sandbox_proc
from mlab.sandbox.bwrap import (bwrap_features, build_bwrap_command, gpu_device_nodes,
                                interpreter_layout)
from mlab.sandbox.cgroup import ScriptCgroup
from mlab.sandbox.disk import DiskWatch, workspace_bytes
from mlab.sandbox.output import OutputCollector
from mlab.sandbox.owner import WorkspaceLoan
from mlab.sandbox.seccomp import script_filter
from mlab.sandbox.supervise import Limits, supervise
from mlab.sandbox.uids import FALLBACK_GID, FALLBACK_UID, UidLease

log = logging.getLogger("mlab.sandbox")

SANDBOX_UID = FALLBACK_UID   # nobody: the uid shared when the pool of uids is used up
SANDBOX_GID = FALLBACK_GID
SANDBOX_TASKS = 2       # bubblewrap and its init run as the script's uid and in its cgroup
NPROC_SLACK = 16        # RLIMIT_NPROC lies this far above the budget the watchdog enforces
DEFAULT_MAX_PROCESSES = 1024
ADDRESS_SPACE_HEADROOM = 8 << 30   # RLIMIT_AS = memory limit + this (see _limits)
DEFAULT_SCRATCH_BYTES = 2 << 30    # size of /tmp and /dev/shm when no memory limit is set
PROBE_TEXT = "mlab sandbox ok"
NO_SANDBOX_VARIABLE = "MLAB_NO_SANDBOX"



def size_text(n: int) -> str:
    """Bytes as an agent reads them: 20 MiB, 1.5 GiB."""
    if n >= 1 << 30:
        return f"{n / 2**30:.2f}".rstrip("0").rstrip(".") + " GiB"
    return f"{n / 2**20:.0f} MiB"


def _killed_reason(code: str | None, policy: SandboxPolicy, disk_used: int = 0) -> str | None:
    """The watchdog's reason code as a phrase an agent can act on."""
    if code is None:
        return None
    memory = size_text(policy.memory_bytes) if policy.memory_bytes else "the limit"
    disk = size_text(policy.disk_bytes) if policy.disk_bytes else "the limit"
    return {
        "timeout": f"it reached the time limit of {policy.timeout_s:g} s",
        "memory": f"its processes together used more than {memory} of memory",
        "processes": (f"it reached its process budget of {policy.max_processes} processes and "
                      "threads (a fork bomb?)"),
        "disk": (f"the workspace grew past its disk limit of {disk} (it held {size_text(disk_used)}); "
                 "nothing was deleted: remove files to make room"),
        "init": ("the sandbox's init process stopped working (it was stopped or tampered with "
                 "from inside), so the sandbox was ended"),
        "sandbox_failed": "the sandbox could not start it (see the output)",
        "stopped": "mlab stopped it (the run ended)",
    }.get(code, code)


@dataclass(frozen=True)
class SandboxPolicy:
    """Where and under which limits one script runs."""

    workspace: Path                 # bound read-write; the script's cwd
    timeout_s: float                # wall-clock limit (caller passes min(script timeout, run time left))
    memory_bytes: int | None        # limit for the whole process tree (None: no limit)
    max_output_chars: int = 10000   # observation bound: keep head and tail, mark the cut
    python: str = sys.executable    # interpreter (--python)
    device: str | None = None       # CUDA_VISIBLE_DEVICES ("" hides all GPUs; None inherits)
    hidden: tuple[Path, ...] = ()   # extra paths that must be invisible inside
    network: bool = False
    env: Mapping[str, str] = field(default_factory=dict)   # extra environment
    read_only: tuple[Path, ...] = ()   # workspace files the script may read but not change
    max_processes: int = DEFAULT_MAX_PROCESSES   # processes and threads the script may have at once
    max_streamed_chars: int = 1_000_000   # bound on what on_output receives
    disk_bytes: int | None = None   # most the workspace may hold while the script runs (None: no limit)
    binds: tuple[tuple[str, str, bool], ...] = ()   # (host path, path inside, writable): an external agent's gateway
    stop: threading.Event | None = None   # set: end the script now (an external agent past a limit)


@dataclass(frozen=True)
class ScriptResult:
    """What happened to one script, as measured.

    exit_code is None when mlab stopped the script; killed_reason then says why
    in a phrase ("it reached the time limit of 30 s"), and timed_out or
    out_of_memory tell the two common cases apart. A script that died of
    signal N has exit code 128 + N. out_of_memory is also set when the script
    itself failed on an allocation refused by the address-space backstop.
    """

    exit_code: int | None
    timed_out: bool
    out_of_memory: bool
    killed_reason: str | None
    output: str            # combined stdout+stderr, bounded (head + tail) for the observation
    output_chars: int      # total produced
    wall_s: float
    cpu_s: float
    peak_memory_bytes: int
    sandboxed: bool        # bubblewrap used?
    accelerator: dict | None = None   # busy seconds sampled while it ran (sandbox/accelerator.py); None: not sampled


def describe_result(result: ScriptResult) -> str:
    """One line for an observation: how the script ended and what it cost."""
    cost = (f"{result.wall_s:.1f} s wall, {result.cpu_s:.1f} s CPU, "
            f"peak memory {result.peak_memory_bytes / 2**20:.0f} MiB")
    if result.killed_reason:
        ending = f"The script was stopped: {result.killed_reason}"
    elif result.out_of_memory:
        ending = f"The script ran out of memory (exit code {result.exit_code})"
    else:
        ending = f"The script ended with exit code {result.exit_code}"
    return f"{ending} ({cost})."


_warned = threading.Event()


def _warn_unsandboxed(reason: str) -> None:
    if not _warned.is_set():
        _warned.set()
        log.warning(
            "\n*** mlab: scripts run WITHOUT a sandbox: %s. They can read every file this user "
            "can read (answers included) and use the network; only the time, memory, process "
            "and output limits apply. Install bubblewrap (apt-get install -y bubblewrap). ***",
            reason)


@functools.lru_cache(maxsize=1)
def _probe_bubblewrap() -> tuple[bool, str]:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False, "bubblewrap is not installed (apt-get install -y bubblewrap)"
    with tempfile.TemporaryDirectory(prefix="mlab-sandbox-probe-") as folder:
        policy = SandboxPolicy(workspace=Path(folder), timeout_s=60, memory_bytes=None)
        result = _run([sys.executable, "-I", "-S", "-c", f"print({PROBE_TEXT!r})"], policy, None, bwrap)
    if result.exit_code == 0 and PROBE_TEXT in result.output:
        return True, f"bubblewrap at {bwrap} works"
    detail = result.output.strip().splitlines()[-1:] or [f"exit code {result.exit_code}"]
    return False, f"bubblewrap is installed but cannot start a sandbox here: {detail[0]}"


def sandbox_available() -> tuple[bool, str]:
    """(usable?, reason): whether scripts will run inside bubblewrap, and why (not)."""
    if os.environ.get(NO_SANDBOX_VARIABLE):
        return False, f"the sandbox is turned off by {NO_SANDBOX_VARIABLE}"
    return _probe_bubblewrap()


def run_script(argv: list[str], policy: SandboxPolicy,
               on_output: Callable[[str], None] | None = None) -> ScriptResult:
    """Run argv in policy.workspace under the policy's limits and report what happened.

    on_output receives the output as it streams (up to policy.max_streamed_chars).
    """
    argv = [os.fspath(part) for part in argv]
    if not argv:
        raise ValueError("run_script needs a command: argv is empty")
    if not Path(policy.workspace).is_dir():
        raise ValueError(f"the workspace {policy.workspace} is not a folder")
    if policy.memory_bytes is not None and policy.memory_bytes <= 0:
        raise ValueError(f"memory_bytes must be positive or None, not {policy.memory_bytes}")
    if not (os.path.isfile(policy.python) and os.access(policy.python, os.X_OK)):
        raise ValueError(f"the interpreter {policy.python} does not exist or is not executable "
                         "(set it with --python)")
    usable, reason = sandbox_available()
    if not usable:
        _warn_unsandboxed(reason)
    return _run(argv, policy, on_output, shutil.which("bwrap") if usable else None)


def _default_hidden() -> list[str]:
    """mlab's own files: the packages, their data (task data holds answers), the source tree, the cache."""
    folders: list[str] = []
    for package in ("mlab", "mlabc"):
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            spec = None
        folders += list(spec.submodule_search_locations or []) if spec else []
    try:
        from mlabc.resources import data_dir
        for name in ("tasks", "spec", "grammars"):
            folders.append(str(data_dir(name)))
    except (ImportError, FileNotFoundError):
        pass
    paths: set[str] = set()
    for folder in map(os.path.realpath, folders):
        paths.add(folder)
        parent = os.path.dirname(folder)
        # In an editable install the package folder sits in the repository: hide all of it.
        if any(os.path.exists(os.path.join(parent, mark)) for mark in ("pyproject.toml", ".git")):
            paths.add(parent)
    from mlab.cache import cache_root

    paths.add(os.path.realpath(cache_root()))
    return sorted(paths)


def _reachable_by(path: str, uid: int, gid: int) -> bool:
    """Whether uid:gid may walk to path and read and execute it (mode bits only)."""
    path = os.path.realpath(path)
    checks = [(p, stat.S_IXOTH, stat.S_IXGRP, stat.S_IXUSR) for p in Path(path).parents]
    checks.append((path, stat.S_IXOTH | stat.S_IROTH, stat.S_IXGRP | stat.S_IRGRP,
                   stat.S_IXUSR | stat.S_IRUSR))
    for folder, other, group, owner in checks:
        try:
            info = os.stat(folder)
        except OSError:
            return False
        wanted = owner if info.st_uid == uid else group if info.st_gid == gid else other
        if info.st_mode & wanted != wanted:
            return False
    return True


def _user_name(uid: int) -> str:
    """The uid's name, or one for a uid of the pool, which /etc/passwd does not list."""
    import pwd

    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return "mlab-sandbox"


def _script_env(policy: SandboxPolicy, home: str, uid: int) -> dict[str, str]:
    """A clean environment: nothing of the harness's (API keys stay outside)."""
    python_bin = os.path.dirname(os.path.abspath(policy.python))
    # USER and LOGNAME answer getpass.getuser() (torch's caches ask) for a uid passwd lacks.
    env = {
        "PATH": f"{python_bin}:/usr/local/bin:/usr/bin:/bin", "USER": _user_name(uid),
        "LOGNAME": _user_name(uid), "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8",
        "PYTHONUNBUFFERED": "1", "PYTHONIOENCODING": "utf-8", "MPLBACKEND": "Agg",
    }
    if policy.device is not None:
        env["CUDA_VISIBLE_DEVICES"] = policy.device
    elif "CUDA_VISIBLE_DEVICES" in os.environ:
        env["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
    env.update({str(k): str(v) for k, v in policy.env.items()})
    return env


def _limits(policy: SandboxPolicy, uid: int, gpu: bool, sandbox_tasks: int, own_uid: bool,
            disk_room: int | None) -> dict[str, int | None]:
    """Kernel resource limits for the script's processes.

    RLIMIT_NPROC counts all tasks of the uid, so the cap is what exists now
    plus the budget and the sandbox's own tasks. A uid of the pool is the
    script's alone: the kernel refuses at the budget exactly. A shared uid's
    count can move (the harness's threads, other scripts), so it gets a slack
    that keeps the kernel's refusal above the watchdog's threshold.
    RLIMIT_AS is per process and only a backstop for one huge allocation (the
    watchdog limits the tree): it gets generous headroom, since thread arenas
    and imported libraries reserve address space they never use, and it is
    left off when GPUs are visible (CUDA reserves terabytes). RLIMIT_FSIZE is
    the workspace's room under its disk limit: no single file outgrows it.
    """
    tasks = (sandbox_proc.tasks_of_user(uid) + policy.max_processes + sandbox_tasks
             + (0 if own_uid else NPROC_SLACK))
    return {"NPROC": tasks, "CORE": 0, "AS": _address_space(policy, gpu), "FSIZE": disk_room}


def _address_space(policy: SandboxPolicy, gpu: bool) -> int | None:
    """RLIMIT_AS of the script's processes (see _limits)."""
    return None if policy.memory_bytes is None or gpu else policy.memory_bytes + ADDRESS_SPACE_HEADROOM


def _disk_watch(policy: SandboxPolicy, workspace: str) -> DiskWatch | None:
    """The watch of the workspace's disk use under the policy's limit (None: no limit)."""
    if policy.disk_bytes is None:
        return None
    start = workspace_bytes(workspace)
    # A workspace already over its limit may shrink, not grow.
    return DiskWatch(workspace, max(policy.disk_bytes, start), start)


_MEMORY_ERROR_MARKS = ("MemoryError", "std::bad_alloc", "Cannot allocate memory")


def _run(argv: list[str], policy: SandboxPolicy, on_output, bwrap: str | None) -> ScriptResult:
    if policy.timeout_s <= 0:
        return ScriptResult(None, True, False, _killed_reason("timeout", policy), "", 0, 0.0, 0.0, 0,
                            bwrap is not None)
    drop = os.geteuid() == 0
    lease = UidLease.take() if drop else UidLease(SANDBOX_UID, SANDBOX_GID, None)
    try:
        return _run_as(argv, policy, on_output, bwrap, lease if drop else None)
    finally:
        lease.release()


def _bwrap_config(policy: SandboxPolicy, workspace: str, python: str, bwrap: str, gpu: bool,
                  read_only: set[str], stage: bool) -> dict:
    """The parts of a launcher's configuration that run bubblewrap (its command, the filter)."""
    features = bwrap_features(bwrap)
    hidden = [os.path.realpath(p) for p in policy.hidden] + _default_hidden()
    command = build_bwrap_command(
        workspace=workspace, layout=interpreter_layout(python), hidden=hidden,
        read_only=sorted(read_only), network=policy.network, gpu=gpu,
        tmpfs_bytes=policy.memory_bytes or DEFAULT_SCRATCH_BYTES, features=features,
        extra_binds=policy.binds)
    seccomp = script_filter()
    return dict(mode="bwrap", bwrap=bwrap, bwrap_flags=command.flags, bwrap_ops=command.ops, stage=stage,
                json_status=features.json_status, start_reported=features.json_status,
                seccomp=seccomp.hex() if seccomp else None)


def _run_as(argv: list[str], policy: SandboxPolicy, on_output, bwrap: str | None,
            lease: UidLease | None) -> ScriptResult:
    workspace = os.path.realpath(policy.workspace)
    python = os.path.abspath(policy.python)
    drop = lease is not None
    uid, gid = (lease.uid, lease.gid) if lease else (os.getuid(), os.getgid())
    if drop and bwrap is None and not (_reachable_by(python, uid, gid)
                                       and _reachable_by(workspace, uid, gid)):
        # Without bubblewrap nothing can make the interpreter or the workspace
        # reachable for the unprivileged uid: the script keeps the harness's uid.
        drop, uid, gid = False, os.getuid(), os.getgid()
    disk = _disk_watch(policy, workspace)
    gpu = policy.device != "" and bool(gpu_device_nodes())
    sandbox_tasks = SANDBOX_TASKS if bwrap else 0
    limits = _limits(policy, uid, gpu, sandbox_tasks, drop and lease.pooled,
                     disk.allowed_bytes - disk.used_bytes if disk else None)
    collector = OutputCollector(policy.max_output_chars, on_output, policy.max_streamed_chars)

    read_only = {os.path.realpath(p if os.path.isabs(p) else os.path.join(workspace, p))
                 for p in policy.read_only}
    scratch_home = None if bwrap else tempfile.mkdtemp(prefix="mlab-script-home-")
    loan = WorkspaceLoan(Path(workspace), uid, gid, keep=read_only) if drop else None
    cgroup = ScriptCgroup.create(policy.memory_bytes, policy.max_processes + sandbox_tasks)
    try:
        if scratch_home and drop:
            os.chown(scratch_home, uid, gid)
        if loan:
            loan.lend()
        config = {"argv": argv, "limits": limits, "uid": uid if drop else None,
                  "gid": gid if drop else None, "own_uid": bool(drop and lease.pooled), "cwd": workspace,
                  "env": _script_env(policy, "/tmp" if bwrap else scratch_home, uid)}
        scratch_mounts: tuple[str, ...] = ()
        if bwrap:
            config.update(_bwrap_config(policy, workspace, python, bwrap, gpu, read_only, drop))
            scratch_mounts = ("/tmp", "/dev/shm")
        else:
            config.update(mode="direct")
        watched = supervise(config, Limits(policy.timeout_s, policy.memory_bytes, policy.max_processes,
                                           scratch_mounts, disk, policy.stop), collector, cgroup)
        if watched.killed_reason and drop and lease.pooled:
            # what a killed tree left beyond the watched one (orphans of a killed launcher) runs
            # as the leased uid alone: none of it outlives the lease
            sandbox_proc.kill_user(uid, gid)
    finally:
        if cgroup:
            cgroup.remove()
        if loan:
            loan.restore()
        if scratch_home:
            shutil.rmtree(scratch_home, ignore_errors=True)

    return _script_result(watched, collector, policy, limits["AS"], disk, sandboxed=bwrap is not None)


def _script_result(watched, collector: OutputCollector, policy: SandboxPolicy, address_space: int | None,
                   disk: DiskWatch | None, sandboxed: bool) -> ScriptResult:
    """What the watch measured, as the script's result."""
    output = collector.text()
    out_of_memory = watched.killed_reason == "memory" or (
        watched.exit_code not in (0, None) and address_space is not None
        and any(mark in output[-2000:] for mark in _MEMORY_ERROR_MARKS))
    return ScriptResult(
        exit_code=watched.exit_code, timed_out=watched.killed_reason == "timeout",
        out_of_memory=out_of_memory,
        killed_reason=_killed_reason(watched.killed_reason, policy, disk.used_bytes if disk else 0),
        output=output,
        output_chars=collector.total_chars, wall_s=watched.wall_s, cpu_s=watched.cpu_s,
        peak_memory_bytes=watched.peak_memory_bytes, sandboxed=sandboxed)
