"""run_script as the runtime uses it: output, exit codes, limits, measurements, settings.

Each behaviour is checked inside bubblewrap (skipped where it is missing) and
without a sandbox, where the same limits must still hold.
"""
from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from needs import module

from conftest_sandbox import MiB, folders, mode, sandboxed  # noqa: F401  (fixtures)
from mlab.sandbox import runner as sandbox
from mlab.sandbox.runner import SandboxPolicy, describe_result, run_script, sandbox_available
from mlab.sandbox.output import OutputCollector


def test_a_normal_script_gives_its_output_and_exit_code(folders, mode):
    result = folders.run("""
        import sys
        print("training done, mae 1234.5")
        print("a warning", file=sys.stderr)
    """)
    assert result.exit_code == 0
    assert "training done, mae 1234.5\n" in result.output
    assert "a warning\n" in result.output
    assert result.output_chars == len(result.output)
    assert not result.timed_out and not result.out_of_memory and result.killed_reason is None
    assert result.sandboxed is (mode == "bubblewrap")
    assert "exit code 0" in describe_result(result)


def test_the_script_runs_in_the_workspace(folders, mode):
    (folders.workspace / "train.csv").write_text("Id,SalePrice\n")
    result = folders.run("""
        import os
        print(os.getcwd())
        print(open("train.csv").read())
    """)
    assert result.output.splitlines()[:2] == [str(folders.workspace.resolve()), "Id,SalePrice"]


def test_a_failing_script_gives_its_exit_code_and_traceback(folders, mode):
    result = folders.run("raise ValueError('the column SalePrice is missing')\n")
    assert result.exit_code == 1
    assert "ValueError: the column SalePrice is missing" in result.output
    assert folders.run("import sys; sys.exit(3)\n").exit_code == 3


def test_a_script_killed_by_a_signal_reports_128_plus_the_signal(folders, mode):
    result = folders.run("import os, signal; os.kill(os.getpid(), signal.SIGKILL)\n")
    assert result.exit_code == 128 + 9
    assert result.killed_reason is None   # the script died; mlab did not stop it


def test_output_streams_to_the_callback(folders, mode):
    chunks: list[str] = []
    result = folders.run("""
        for i in range(5):
            print("epoch", i)
    """, on_output=chunks.append)
    assert "".join(chunks) == result.output == "".join(f"epoch {i}\n" for i in range(5))


def test_a_script_past_its_time_limit_is_stopped(folders, mode):
    result = folders.run("while True:\n    pass\n", timeout_s=1.0)
    assert result.timed_out
    assert result.exit_code is None
    assert result.killed_reason == "it reached the time limit of 1 s"
    assert result.cpu_s > 0.05   # the busy loop's CPU time was measured
    assert "time limit" in describe_result(result)


def test_no_time_left_means_the_script_does_not_start(folders, mode):
    (folders.workspace / "marker.py").write_text("open('ran', 'w').write('yes')\n")
    policy = folders.policy(timeout_s=0)
    result = run_script([policy.python, "marker.py"], policy)
    assert result.timed_out and result.exit_code is None
    assert not (folders.workspace / "ran").exists()


def test_compute_is_measured_for_the_whole_tree(folders, mode):
    result = folders.run("""
        import subprocess, sys
        # The memory and CPU are spent in a child process: they must still be counted.
        subprocess.run([sys.executable, "-c",
            "import time; block = bytearray(150 << 20); block[::4096] = b'x' * len(block[::4096]);"
            "end = time.process_time() + 0.3\\nwhile time.process_time() < end: pass\\n"
            "time.sleep(0.3)"], check=True)
        print("ok")
    """)
    assert result.exit_code == 0, result.output
    assert result.peak_memory_bytes >= 150 * MiB
    assert result.cpu_s >= 0.25
    assert result.wall_s >= 0.5


def test_memory_shared_by_forked_workers_is_counted_once(folders, mode):
    # Like a data loader: workers forked from a parent that holds the data share
    # its pages; counting them once per process would stop a healthy script.
    result = folders.run("""
        import os, time
        data = bytearray(300 << 20)
        data[::4096] = b"x" * len(data[::4096])
        workers = []
        for _ in range(3):
            pid = os.fork()
            if pid == 0:
                time.sleep(1.5)
                os._exit(0)
            workers.append(pid)
        for pid in workers:
            os.waitpid(pid, 0)
        print("workers done")
    """, memory_bytes=700 * MiB)
    assert result.exit_code == 0, (result.killed_reason, result.output)
    assert result.output == "workers done\n"
    assert 300 * MiB <= result.peak_memory_bytes < 700 * MiB


def test_numpy_works_under_the_limits(folders, mode):
    module("numpy", "numpy, a dependency of mlab")
    result = folders.run("""
        import numpy as np
        a = np.random.default_rng(0).random((300, 300))
        print("numpy", int((a @ a).sum() > 0))
    """, memory_bytes=1024 * MiB)
    assert result.exit_code == 0, result.output
    assert "numpy 1" in result.output


def test_torch_works_under_the_limits(folders, sandboxed):
    # The strictest setting only: torch takes seconds to import.
    module("torch", "torch, a test extra: pip install -e '.[test]'")
    result = folders.run("""
        import torch
        x = torch.ones(200, 200)
        print("torch", int((x @ x)[0, 0]))
    """, memory_bytes=2048 * MiB, timeout_s=120)
    assert result.exit_code == 0, result.output
    assert "torch 200" in result.output


@pytest.mark.parametrize("device, inherited, seen", [
    ("", None, "''"), ("1", None, "'1'"), (None, "7", "'7'"), (None, None, "None")])
def test_device_sets_cuda_visible_devices(folders, mode, monkeypatch, device, inherited, seen):
    if inherited is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", inherited)
    result = folders.run("import os; print(repr(os.environ.get('CUDA_VISIBLE_DEVICES')))\n",
                         device=device)
    assert result.output.strip() == seen


def test_the_environment_is_clean_and_takes_extra_variables(folders, mode, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-harness-secret")
    result = folders.run("""
        import os
        print(sorted(os.environ.items()))
    """, env={"SEED": "42"})
    assert "sk-harness-secret" not in result.output
    assert "('SEED', '42')" in result.output
    assert "('PYTHONUNBUFFERED', '1')" in result.output


def test_the_script_can_ask_for_its_user_name(folders, mode):
    # A uid of the pool is in no /etc/passwd; libraries (torch's caches) still ask for a name.
    result = folders.run("import getpass; print(getpass.getuser())\n")
    assert result.exit_code == 0, result.output
    assert result.output.strip()


def test_the_interpreter_is_configurable(folders, mode, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    result = folders.run("import sys; print(sys.prefix)\n", python=python)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == str(venv)


def test_network_is_available_only_when_the_policy_allows_it(folders, mode):
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        result = folders.run(f"""
            import socket
            socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
            print("connected")
        """, network=True)
    assert result.output.strip() == "connected"


@pytest.mark.skipif(os.geteuid() != 0, reason="ownership is only lent when mlab runs as root")
def is_pool_uid(uid: int) -> bool:
    """An unprivileged uid of mlab's pool: one per script running at once."""
    from mlab.sandbox.uids import POOL_FIRST_UID, POOL_SIZE
    return POOL_FIRST_UID <= uid < POOL_FIRST_UID + POOL_SIZE


def test_the_workspace_is_given_back_to_its_owner(folders, mode):
    (folders.workspace / "train.csv").write_text("Id\n1\n")
    result = folders.run("""
        import os
        os.makedirs("models/best", exist_ok=True)
        open("models/best/weights.txt", "w").write("w")
        open("submission.csv", "w").write("Id,SalePrice\\n")
        print(os.getuid())
    """, read_only=(folders.workspace / "train.csv",))
    assert result.exit_code == 0, result.output
    for path in [folders.workspace, *folders.workspace.rglob("*")]:
        assert path.lstat().st_uid == os.getuid(), path
    if mode == "bubblewrap" and os.geteuid() == 0:
        assert is_pool_uid(int(result.output.strip()))


def test_read_only_workspace_files_cannot_be_changed_by_a_script(folders, sandboxed):
    (folders.workspace / "train.csv").write_text("Id,SalePrice\n1,100\n")
    result = folders.run("""
        import os
        for attempt in (lambda: open("train.csv", "w").write("x"),
                        lambda: os.remove("train.csv"),
                        lambda: os.rename("train.csv", "moved.csv")):
            try:
                attempt()
                print("changed")
            except OSError as error:
                print("refused", type(error).__name__)
    """, read_only=(folders.workspace / "train.csv",))
    assert result.output.count("refused") == 3, result.output
    assert (folders.workspace / "train.csv").read_text() == "Id,SalePrice\n1,100\n"


def test_running_without_a_sandbox_warns_once(folders, monkeypatch, caplog):
    monkeypatch.setenv(sandbox.NO_SANDBOX_VARIABLE, "1")
    monkeypatch.setattr(sandbox, "_warned", type(sandbox._warned)())
    with caplog.at_level(logging.WARNING, logger="mlab.sandbox"):
        first = folders.run("print('one')\n")
        second = folders.run("print('two')\n")
    warnings = [r for r in caplog.records if "WITHOUT a sandbox" in r.getMessage()]
    assert len(warnings) == 1
    assert "MLAB_NO_SANDBOX" in warnings[0].getMessage()
    assert not first.sandboxed and not second.sandboxed
    assert first.exit_code == second.exit_code == 0


def test_sandbox_available_says_why(monkeypatch):
    usable, reason = sandbox_available()
    assert isinstance(usable, bool) and reason
    monkeypatch.setenv(sandbox.NO_SANDBOX_VARIABLE, "1")
    assert sandbox_available() == (False, "the sandbox is turned off by MLAB_NO_SANDBOX")


def test_bad_calls_are_refused_with_a_clear_message(tmp_path):
    policy = SandboxPolicy(workspace=tmp_path / "missing", timeout_s=5, memory_bytes=None)
    with pytest.raises(ValueError, match="is not a folder"):
        run_script([sys.executable, "x.py"], policy)
    with pytest.raises(ValueError, match="argv is empty"):
        run_script([], SandboxPolicy(workspace=tmp_path, timeout_s=5, memory_bytes=None))
    missing = str(tmp_path / "no-python")
    with pytest.raises(ValueError, match="no-python does not exist or is not executable"):
        run_script([missing, "x.py"], SandboxPolicy(workspace=tmp_path, timeout_s=5,
                                                    memory_bytes=None, python=missing))


def test_a_delegated_cgroup_holds_the_script_and_gives_the_account(folders, mode, tmp_path,
                                                                  monkeypatch):
    # A stand-in for a delegated cgroup v2 folder: the files the kernel would
    # provide are plain files here, so this checks mlab's side of the protocol.
    from mlab.sandbox import cgroup as sandbox_cgroup

    base = tmp_path / "cgroup"
    base.mkdir()
    (base / "cgroup.subtree_control").write_text("cpu memory pids\n")
    monkeypatch.setenv(sandbox_cgroup.CGROUP_VARIABLE, str(base))
    made = []
    monkeypatch.setattr(sandbox_cgroup.ScriptCgroup, "remove", lambda self: made.append(self.path))
    monkeypatch.setattr(sandbox_cgroup.ScriptCgroup, "usage", lambda self: sandbox_cgroup.CgroupUsage(
        peak_memory_bytes=123 * MiB, cpu_s=4.5, oom_kills=0))
    result = folders.run("print('in the cgroup')\n", memory_bytes=256 * MiB)
    assert result.output == "in the cgroup\n"
    assert len(made) == 1
    assert (made[0] / "memory.max").read_text() == str(256 * MiB)
    assert (made[0] / "cgroup.procs").read_text() == "0"   # the launcher's child joined
    assert (result.peak_memory_bytes, result.cpu_s) == (123 * MiB, 4.5)


def test_no_cgroup_is_used_where_none_is_delegated(monkeypatch, tmp_path):
    from mlab.sandbox import cgroup as sandbox_cgroup

    monkeypatch.setenv(sandbox_cgroup.CGROUP_VARIABLE, str(tmp_path))   # memory not enabled
    assert sandbox_cgroup.ScriptCgroup.create(256 * MiB) is None


def test_output_keeps_head_and_tail_and_marks_the_cut():
    short = OutputCollector(max_chars=10)
    short.add_bytes(b"short")
    assert short.text() == "short"
    collector = OutputCollector(max_chars=20)
    collector.add_bytes(b"a" * 50 + b"b" * 50)
    kept = collector.text()
    assert kept.startswith("a" * 10) and kept.endswith("b" * 10)
    assert "[... 80 characters of output omitted ...]" in kept


def test_output_collector_decodes_characters_split_across_chunks():
    collector = OutputCollector(max_chars=100)
    data = "héllo wörld ✓\n".encode()
    for i in range(len(data)):
        collector.add_bytes(data[i:i + 1])
    assert collector.text() == "héllo wörld ✓\n"
    assert collector.total_chars == len("héllo wörld ✓\n")


def test_output_collector_bounds_memory_and_stream():
    streamed: list[str] = []
    collector = OutputCollector(max_chars=10, stream=streamed.append, stream_limit=25)
    for i in range(1000):
        collector.add_bytes(f"{i:04d}\n".encode())
    text = collector.text()
    assert text.startswith("0000\n") and text.endswith("0999\n")
    assert collector.total_chars == 5000
    assert "[... 4990 characters of output omitted ...]" in text
    assert "".join(streamed).startswith("0000\n0001\n0002\n0003\n0004\n")
    assert "live output stops here" in streamed[-1]


SYSTEM_PYTHON = "/usr/bin/python3"


@pytest.mark.skipif(os.geteuid() != 0 or not os.access(SYSTEM_PYTHON, os.X_OK),
                    reason="needs root and an interpreter that the unprivileged uid can run")
def test_without_a_sandbox_a_root_harness_still_drops_to_an_unprivileged_uid(monkeypatch):
    monkeypatch.setenv(sandbox.NO_SANDBOX_VARIABLE, "1")
    base = Path(tempfile.mkdtemp(prefix="mlab-test-drop-"))
    try:
        base.chmod(0o755)   # the unprivileged uid must be able to walk to the workspace
        workspace = base / "runs" / "r1" / "workspace"
        workspace.mkdir(parents=True)
        private = base / "runs" / "r1" / "private"
        private.mkdir()
        answers = private / "answers.csv"
        answers.write_text("SECRET\n")
        answers.chmod(0o600)
        os.link(answers, workspace / "linked-answers.csv")   # as if planted earlier
        (workspace / "script.py").write_text(
            "import os\n"
            "print(os.getuid())\n"
            "open('made-by-script.txt', 'w').write('x')\n"
            "try:\n"
            "    print('READ', open('linked-answers.csv').read())\n"
            "except OSError as error:\n"
            "    print('refused:', type(error).__name__)\n")
        policy = SandboxPolicy(workspace=workspace, timeout_s=20, memory_bytes=512 * MiB,
                               python=SYSTEM_PYTHON)
        result = run_script([SYSTEM_PYTHON, "script.py"], policy)
        uid, refusal = result.output.splitlines()
        assert is_pool_uid(int(uid)) and refusal == "refused: PermissionError"
        assert not result.sandboxed
        assert answers.stat().st_uid == 0 and (answers.stat().st_mode & 0o777) == 0o600
        assert (workspace / "made-by-script.txt").stat().st_uid == 0
    finally:
        shutil.rmtree(base)


def run_bpf(program: bytes, nr: int, arch: int) -> int:
    """What a classic BPF seccomp program returns for one call (the few opcodes it uses)."""
    import struct

    data = struct.pack("=iI", nr, arch)
    code = [struct.unpack("=HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    pc, accumulator = 0, 0
    while True:
        op, jump_true, jump_false, k = code[pc]
        if op == 0x20:
            accumulator = struct.unpack_from("=I", data, k)[0]
            pc += 1
        elif op == 0x15:
            pc += 1 + (jump_true if accumulator == k else jump_false)
        elif op == 0x06:
            return k
        else:
            raise AssertionError(f"unexpected opcode {op:#x}")


@pytest.mark.parametrize("machine, arch, ptrace, other", [
    ("x86_64", 0xC000003E, 101, 0),            # 64-bit: read is 0
    ("x86_64", 0xC000003E, 0x40000000 | 521, 0x40000000),  # x32
    ("x86_64", 0x40000003, 26, 3),             # i386: read is 3
    ("aarch64", 0xC00000B7, 117, 63),          # aarch64: read is 63
    ("aarch64", 0x40000028, 26, 3),            # 32-bit arm
])
def test_the_seccomp_filter_refuses_ptrace_and_allows_the_rest(machine, arch, ptrace, other):
    from mlab.sandbox.seccomp import RET_ALLOW, RET_ERRNO, RET_KILL_PROCESS, script_filter

    program = script_filter(machine)
    assert run_bpf(program, ptrace, arch) == RET_ERRNO | 1     # EPERM
    assert run_bpf(program, other, arch) == RET_ALLOW
    assert run_bpf(program, 101, 0xDEADBEEF) == RET_KILL_PROCESS   # an ABI it does not know
    assert script_filter("riscv64") is None


@pytest.mark.parametrize("machine, arch, calls", [
    ("x86_64", 0xC000003E, (248, 249, 250)),                              # add_key, request_key, keyctl
    ("x86_64", 0xC000003E, (0x40000000 | 248, 0x40000000 | 249, 0x40000000 | 250)),   # x32
    ("x86_64", 0x40000003, (286, 287, 288)),                              # i386
    ("aarch64", 0xC00000B7, (217, 218, 219)),
    ("aarch64", 0x40000028, (309, 310, 311)),                             # 32-bit arm
])
def test_the_seccomp_filter_refuses_the_keyring_calls(machine, arch, calls):
    from mlab.sandbox.seccomp import RET_ERRNO, script_filter

    program = script_filter(machine)
    assert [run_bpf(program, call, arch) for call in calls] == [RET_ERRNO | 1] * 3
