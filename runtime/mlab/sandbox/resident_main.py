"""The interpreter kept inside a resident sandbox (mlab.sandbox.resident): it forks one child per script.

This file is not imported: the harness reads its text and starts it inside bubblewrap as
`python -c TEXT CONTROL_FD`, with the environment, limits and uid of the scripts it will run.
The interpreter is thereby started (and its site packages found) once, and each script costs
a fork instead of an interpreter's start. What it imports beyond a fresh interpreter's start
(ctypes for prctl, _socket, _signal, gc) each child leaves out of sys.modules again, and what it
holds is frozen (gc.freeze) so that no script's collections or shutdown walk it.

The harness sends one message per script on CONTROL_FD (an AF_UNIX SOCK_SEQPACKET socket):
marshal data {"argv", "cwd", "fsize"} with two descriptors attached, the write ends of the
script's output pipe and of its status pipe. For each, this process:

- forks the child that becomes the script: in the sandbox's one session and process group (as a
  fresh sandbox's script), the signal handlers a fresh interpreter has, stdout and stderr on the
  output pipe, stdin /dev/null, RLIMIT_FSIZE lowered to the workspace's room, dumpable again; it runs
  `python SCRIPT ARGS` in the same way as the interpreter itself does (__main__ with __file__ and a
  source loader, sys.argv, sys.path[0] the script's real folder, the same traceback and exit
  code on an error), or execs argv when it is anything else;
- reaps everything the script left (it is the children's subreaper): when the script's process
  ends, every other process of the sandbox but bubblewrap's init and this one is killed, as a
  PID namespace's death would kill them;
- writes {"exit-code", "tree-cpu-s", "tree-maxrss-kib"} on the status pipe (the kernel's
  account through wait4 of every process it reaped) and closes it;
- cleans what the sandbox would otherwise keep for the next script, in a child of its own: the
  files of /tmp and /dev/shm and the System V IPC objects. When that fails it exits, and the
  harness starts a fresh sandbox for the next script.

It stays non-dumpable, so that a script (which runs as the same uid) cannot open its memory or
descriptors through /proc. It exits when the control socket closes. A script can still kill or
stop it: the harness then ends the sandbox, as for a stopped init.
"""


def _mlab_resident_serve(control_fd):
    import marshal
    import os
    import sys

    baseline = set(sys.modules)
    import _signal
    import _socket

    if os.getpid() != 2 or os.getppid() != 1:
        # Only as the first process under bubblewrap's init in a PID namespace of its own: kill(-1)
        # below must reach the sandbox's processes, never those of the user outside.
        os.write(2, b"mlab: the resident interpreter runs only in a fresh PID namespace\n")
        os._exit(120)
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_dumpable, pr_set_child_subreaper = 4, 36
    libc.prctl(pr_set_dumpable, 0, 0, 0, 0)
    if libc.prctl(pr_set_child_subreaper, 1, 0, 0, 0) != 0:
        os._exit(121)
    # A script is in this process's group and session (as a fresh sandbox's script is in its init's):
    # what it sends its group must not end this process, so the signals that would are ignored here
    # and given back their defaults in each script.
    catchable = (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP, _signal.SIGQUIT, _signal.SIGUSR1,
                 _signal.SIGUSR2, _signal.SIGALRM)
    for sig in catchable:
        _signal.signal(sig, _signal.SIG_IGN)
    control = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET, 0, control_fd)
    ancillary = _socket.CMSG_SPACE(2 * 4)

    def empty(top):
        """Remove what a script left under the tmpfs at top, never crossing into a mount (the
        workspace or a mask may be bound below /tmp, and stays with the folders leading to it)."""
        device = os.lstat(top).st_dev
        if not os.access(top, os.R_OK | os.W_OK | os.X_OK):
            os.chmod(top, 0o1777)
        held = set()   # folders that hold a mount point, and so stay
        order = []     # folders, parents before children
        stack = [top]
        while stack:
            folder = stack.pop()
            order.append(folder)
            with os.scandir(folder) as listing:
                entries = list(listing)
            for entry in entries:
                info = entry.stat(follow_symlinks=False)
                if info.st_dev != device:
                    held.add(folder)
                elif info.st_mode & 0o170000 == 0o040000:
                    if not os.access(entry.path, os.R_OK | os.W_OK | os.X_OK):
                        os.chmod(entry.path, 0o700)
                    stack.append(entry.path)
                else:
                    os.unlink(entry.path)
        for folder in reversed(order):
            if folder in held:
                held.add(os.path.dirname(folder))
            elif folder != top:
                os.rmdir(folder)

    def clean():
        """/tmp and /dev/shm emptied and the IPC objects removed, by a child: True when done."""
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                empty("/tmp")
                empty("/dev/shm")
                status = 0
                for kind, remove in (("shm", libc.shmctl), ("sem", libc.semctl), ("msg", libc.msgctl)):
                    try:
                        with open(f"/proc/sysvipc/{kind}") as table:
                            rows = table.read().splitlines()[1:]
                    except OSError:
                        continue
                    for row in rows:
                        ident = int(row.split()[1])
                        if (remove(ident, 0, 0) if kind == "sem" else remove(ident, 0, None)) != 0:
                            status = 1
            finally:
                os._exit(status)
        return os.waitpid(pid, 0)[1] == 0

    import gc

    # What this interpreter holds now is never garbage: frozen, a script's collections and its
    # interpreter's shutdown leave it alone instead of walking (and so copying) its pages.
    gc.collect()
    gc.freeze()
    control.send(b"ready")
    while True:
        try:
            data, extra, _, _ = control.recvmsg(1 << 16, ancillary)
        except OSError:
            os._exit(0)
        if not data:
            os._exit(0)   # the harness closed the sandbox
        fds = []
        for level, kind, payload in extra:
            if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
                fds += [int.from_bytes(payload[i:i + 4], sys.byteorder) for i in range(0, len(payload) - 3, 4)]
        if len(fds) != 2:
            os._exit(122)
        out_fd, status_fd = fds
        go = marshal.loads(data)
        pid = os.fork()
        if pid == 0:
            for sig in catchable:
                _signal.signal(sig, _signal.default_int_handler if sig == _signal.SIGINT else _signal.SIG_DFL)
            os.dup2(out_fd, 1)
            os.dup2(out_fd, 2)
            os.close(out_fd)
            os.close(status_fd)
            control.close()
            libc.prctl(pr_set_dumpable, 1, 0, 0, 0)
            if go.get("fsize") is not None:
                import resource

                soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
                wanted = go["fsize"] if hard == resource.RLIM_INFINITY else min(go["fsize"], hard)
                resource.setrlimit(resource.RLIMIT_FSIZE, (wanted, wanted))
            for name in set(sys.modules) - baseline:
                del sys.modules[name]
            return go
        os.close(out_fd)
        cpu_s, maxrss_kib, exit_code = 0.0, 0, 1
        while True:
            try:
                reaped, wait_status, usage = os.wait4(-1, 0)
            except ChildProcessError:
                break
            cpu_s += usage.ru_utime + usage.ru_stime
            maxrss_kib = max(maxrss_kib, usage.ru_maxrss)
            if reaped == pid:
                exit_code = (128 + os.WTERMSIG(wait_status) if os.WIFSIGNALED(wait_status)
                             else os.waitstatus_to_exitcode(wait_status))
                try:
                    os.kill(-1, 9)   # everything else in the sandbox but its init and this process
                except ProcessLookupError:
                    pass
        report = '{"exit-code": %d, "tree-cpu-s": %r, "tree-maxrss-kib": %d}\n' % (exit_code, cpu_s, maxrss_kib)
        try:
            os.write(status_fd, report.encode())
        except OSError:
            pass
        os.close(status_fd)
        if not clean():
            os._exit(123)
        control.send(b"ready")


def _mlab_resident_start(go):
    """In the child: become the script (the interpreter is already started)."""
    import os
    import sys

    interrupted_exit = _mlab_interrupted_exit   # the script's globals replace this file's names
    argv = go["argv"]
    os.chdir(go["cwd"])
    python_script = (len(argv) >= 2 and argv[0] == sys.executable and not argv[1].startswith("-")
                     and argv[1].endswith(".py") and os.path.isfile(argv[1]))
    if not python_script:
        try:
            os.execv(argv[0], argv)
        except OSError as error:
            os.write(2, f"mlab: cannot start {argv[0]}: {error.strerror}\n".encode())
            os._exit(127)
    path = argv[1]
    main = sys.modules["__main__"].__dict__
    for name in [name for name in main if name not in (
            "__name__", "__doc__", "__package__", "__loader__", "__spec__", "__annotations__", "__builtins__")]:
        del main[name]
    loader = sys.modules["_frozen_importlib_external"].SourceFileLoader("__main__", path)
    main.update(__file__=path if os.path.isabs(path) else os.path.join(os.getcwd(), path),
                __cached__=None, __loader__=loader)
    sys.argv = list(argv[1:])
    sys.orig_argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.realpath(path))
    try:
        with open(path, "rb") as handle:
            source = handle.read()
        exec(compile(source, main["__file__"], "exec"), main)
    except SystemExit:
        raise
    except BaseException:
        kind, value, trace = sys.exc_info()
        value = value.with_traceback(trace.tb_next)   # as the interpreter shows it: without this frame
        sys.excepthook(kind, value, value.__traceback__)
        del kind, value, trace
        if sys.exc_info()[0] is KeyboardInterrupt:
            interrupted_exit(main)
        raise SystemExit(1) from None


def _mlab_interrupted_exit(main):
    """End as the interpreter does after an unhandled KeyboardInterrupt: shut down, then die of
    SIGINT (exit status 130), which only a signal sent to itself gives."""
    import _signal
    import atexit
    import os
    import sys

    if "threading" in sys.modules:
        sys.modules["threading"]._shutdown()
    atexit._run_exitfuncs()
    main.clear()   # what the script's globals held is released (open files flushed)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
    os.kill(os.getpid(), _signal.SIGINT)


_mlab_resident_start(_mlab_resident_serve(int(__import__("sys").argv[1])))
