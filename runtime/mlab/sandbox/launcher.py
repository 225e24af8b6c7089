"""Starts one agent script under its limits: run as `python -I -S sandbox/launcher.py`.

It is a separate program rather than code run between fork and exec in the
harness, because the harness has threads, and Python code between fork and
exec in a threaded process can deadlock. It runs with the harness's privileges;
its configuration is JSON in $MLAB_SANDBOX_CONFIG or, for a launcher started ahead
of its script (mlab.sandbox.warm), read from stdin to its end before anything else
is done (stdin is /dev/null again before the script starts); built by mlab.sandbox and
mlab.sandbox.supervise. It becomes a child subreaper and forks one child,
which joins the script's cgroups if there are any, sets the resource limits,
drops to the sandbox uid (the supervisor keeps the harness's uid, so the
script cannot signal it when the harness is root) and, by mode, execs:

- "bwrap": bubblewrap (after staging the bind sources, see
  stage_bind_sources), whose PID-namespace init kills the tree when it dies,
  with the seccomp filter of mlab.sandbox.seccomp handed over in a memfd;
- "direct" (no bubblewrap): the script itself.

The supervisor reaps everything, kills what is left of the tree when the child
ends or SIGTERM arrives, and reports JSON documents on the status fd as
bubblewrap's --json-status-fd does: {"child-pid": N} (direct mode; bubblewrap
reports its own), then {"exit-code": N, "tree-cpu-s": X, "tree-maxrss-kib": M}:
the kernel's account of everything it reaped, without its own overhead.
"""
from __future__ import annotations

import ctypes
import marshal
import os
import resource
import signal
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import proc as sandbox_proc  # noqa: E402  (imported by path: this runs outside the package)

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWNS = 0x00020000
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
STAGE_ROOT = "/tmp"
BIND_OPTIONS = ("--bind", "--ro-bind", "--dev-bind")

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def _json_text(value) -> str:
    """A number or a text as JSON (json itself, with re under it, is not imported for so little)."""
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        return '"' + "".join(c if c >= " " else f"\\u{ord(c):04x}" for c in escaped) + '"'
    return repr(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else "null"


def _report(status_fd: int, document: dict) -> None:
    text = "{" + ", ".join(f"{_json_text(key)}: {_json_text(value)}" for key, value in document.items()) + "}"
    try:
        os.write(status_fd, (text + "\n").encode())
    except OSError:
        pass


def _tree_usage() -> dict:
    """CPU seconds and largest resident set of everything this process reaped."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"tree-cpu-s": usage.ru_utime + usage.ru_stime, "tree-maxrss-kib": usage.ru_maxrss}


def _die_with_parent(sig: int, parent_pid: int) -> None:
    """Ask for sig when the harness goes away, and leave if it is already gone."""
    _check(_libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != parent_pid:
        os._exit(125)


def _apply_limits(limits: dict) -> None:
    for name, value in limits.items():
        if value is not None:
            resource.setrlimit(getattr(resource, "RLIMIT_" + name), (value, value))


def _drop_privileges(uid: int | None, gid: int | None) -> None:
    if uid is None:
        return
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


def _default_signals() -> None:
    # Python ignores SIGPIPE and SIGXFSZ; an exec'd script must get the defaults back.
    for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def stage_bind_sources(ops: list[list[str]]) -> list[list[str]]:
    """Make every bind source reachable by the unprivileged sandbox uid.

    bubblewrap resolves bind sources with the caller's permissions, and as the
    sandbox uid it cannot walk into e.g. /root (mode 0700) where the interpreter
    may live. While still root, this process enters a private mount namespace
    (nothing leaks to the host), opens each source, covers /tmp with a fresh
    tmpfs and bind-mounts the sources under it; bubblewrap then binds those
    stand-ins. Sources under /dev are device nodes anyone may open: left alone.
    """
    _check(_libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _check(_libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
    sources: dict[str, int] = {}
    for op in ops:
        if op[0] in BIND_OPTIONS and not op[1].startswith("/dev/") and op[1] not in sources:
            # Opened before /tmp is covered, so sources under /tmp still resolve.
            sources[op[1]] = os.open(op[1], os.O_PATH | os.O_CLOEXEC)
    _check(_libc.mount(b"mlab-stage", STAGE_ROOT.encode(), b"tmpfs", 0, b"mode=0755"), "mount tmpfs")
    staged: dict[str, str] = {}
    for index, (source, fd) in enumerate(sources.items()):
        target = f"{STAGE_ROOT}/{index}"
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            os.mkdir(target, 0o755)
        else:
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
        _check(_libc.mount(f"/proc/self/fd/{fd}".encode(), target.encode(), None,
                           MS_BIND | MS_REC, None), f"bind {source}")
        os.close(fd)
        staged[source] = target
    return [[op[0], staged.get(op[1], op[1]), *op[2:]] if op[0] in BIND_OPTIONS else op
            for op in ops]


def _bwrap_argv(config: dict) -> list[str]:
    """The bubblewrap command line, with bind sources staged when running as root."""
    ops = config["bwrap_ops"]
    if config.get("stage"):
        try:
            ops = stage_bind_sources(ops)
        except OSError as error:
            # Without staging bubblewrap may still manage when every source is public.
            os.write(2, f"mlab sandbox: staging binds failed ({error}); binding in place\n".encode())
    argv = [config["bwrap"], *config["bwrap_flags"]]
    if config.get("seccomp"):
        argv += ["--seccomp", str(_memfd_with(bytes.fromhex(config["seccomp"])))]
    if config.get("json_status"):
        argv += ["--json-status-fd", str(config["status_fd"])]
    for op in ops:
        argv.extend(op)
    return [*argv, "--", *config["argv"]]


def _memfd_with(data: bytes) -> int:
    """An inheritable in-memory file holding data, positioned at its start (bubblewrap reads it)."""
    fd = os.memfd_create("mlab-seccomp", 0)
    os.set_inheritable(fd, True)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _exit_code(wait_status: int) -> int:
    if os.WIFSIGNALED(wait_status):
        return 128 + os.WTERMSIG(wait_status)
    return os.waitstatus_to_exitcode(wait_status)


def _start_child(config: dict, supervisor_pid: int) -> int:
    """Fork the child that becomes bubblewrap or the script, limited and unprivileged."""
    pid = os.fork()
    if pid:
        return pid
    doing = "prepare the script's process"  # what failed, in the message when something does
    try:
        limits = dict(config["limits"])
        joined = bool(config.get("cgroup_procs")) and config.get("cgroup_budgets_tasks")
        for procs_file in config.get("cgroup_procs") or ():
            try:
                with open(procs_file, "w") as procs:
                    procs.write("0")
            except OSError as error:
                joined = False
                _report(config["status_fd"], {"cgroup-failed": str(error)})
        for procs_file in config.get("cgroup_optional_procs") or ():
            try:   # a freezer or a hybrid layout's v2 group: they make the kill atomic, nothing more
                with open(procs_file, "w") as procs:
                    procs.write("0")
            except OSError:
                pass
        if joined:
            # pids.max budgets this script alone; RLIMIT_NPROC would count every
            # script that shares the uid (the fallback when the pool is used up).
            limits.pop("NPROC", None)
        _default_signals()
        if config["mode"] == "bwrap":
            argv = _bwrap_argv(config)   # keeps the status fd: bubblewrap writes to it
            program = f"bubblewrap ({argv[0]}), the sandbox of {config['argv'][0]}"
        else:
            os.close(config["status_fd"])
            argv = config["argv"]
            program = argv[0]
            # Enter the workspace while still privileged: the cwd stays usable even
            # if the sandbox uid could not walk the path leading to it.
            doing = f"enter the workspace {config['cwd']}"
            os.chdir(config["cwd"])
        doing = "apply the script's limits"
        _apply_limits(limits)
        doing = "drop to the sandbox's user"
        _drop_privileges(config["uid"], config["gid"])
        _die_with_parent(signal.SIGKILL, supervisor_pid)
        doing = f"start {program}"
        os.execvpe(argv[0], argv, config["env"])
    except OSError as error:
        os.write(2, f"mlab: cannot {doing}: {error.strerror or error}\n".encode())
    finally:
        os._exit(127)


def supervise(config: dict) -> None:
    """Run the child to its end, reap everything, leave nothing alive.

    As a child subreaper this process inherits every orphan of the tree:
    setsid() grandchildren without bubblewrap, and bubblewrap's PID-namespace
    init (which bubblewrap itself does not wait for), so the CPU time of the
    whole tree reaches the harness through wait4.
    """
    _check(_libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), "prctl(PR_SET_CHILD_SUBREAPER)")
    _die_with_parent(signal.SIGTERM, config["parent_pid"])
    me = os.getpid()
    signal.signal(signal.SIGTERM, lambda *_: sandbox_proc.kill_descendants(me))
    child_pid = _start_child(config, me)
    if config["mode"] == "direct":
        _report(config["status_fd"], {"child-pid": child_pid})
    exit_code = 1
    while True:
        try:
            pid, wait_status = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == child_pid:
            exit_code = _exit_code(wait_status)
            # Like a PID namespace whose init dies: nothing outlives the script.
            # bubblewrap's init (now this process's child) is spared at first so
            # that it reaps what is left and ends by itself; see kill_descendants.
            spare = 1 if config["mode"] == "bwrap" else 0
            sandbox_proc.stop_descendants(me, spare_depth=spare)   # what is stopped cannot fork
            if not sandbox_proc.kill_descendants(me, spare_depth=spare, attempts=50) or not spare:
                sandbox_proc.stop_descendants(me)
                sandbox_proc.kill_descendants(me)
    _report(config["status_fd"], {"exit-code": exit_code, **_tree_usage()})
    os._exit(exit_code if 0 <= exit_code < 256 else 1)


def _read_config() -> dict | None:
    """The configuration: from $MLAB_SANDBOX_CONFIG, or else read from stdin to its end (a
    launcher started ahead of its script, see mlab.sandbox.warm); None when none came."""
    if "MLAB_SANDBOX_CONFIG" in os.environ:
        import json

        return json.loads(os.environ.pop("MLAB_SANDBOX_CONFIG"))
    chunks = []
    while True:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    # what the script inherits as stdin is /dev/null, as for a launcher started on demand
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    # marshal (built in, unlike json): the harness wrote it, on a pipe only it and this process hold
    return marshal.loads(b"".join(chunks)) if chunks else None


def main() -> None:
    # The configuration comes in the environment or a pipe, not argv: other users can read
    # a process's argv, and it may carry the script's environment.
    config = _read_config()
    if config is None:   # a launcher started ahead that was never needed
        os._exit(0)
    try:
        supervise(config)
    except OSError as error:
        os.write(2, f"mlab sandbox: cannot start the script: {error}\n".encode())
        os._exit(126)


if __name__ == "__main__":
    main()
