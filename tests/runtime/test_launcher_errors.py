"""The sandbox launcher names what it could not start: bubblewrap when bubblewrap is missing, the
script's interpreter when that is, the workspace when it cannot enter it."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from mlab.sandbox.supervise import LAUNCHER


def launch(tmp_path, **config) -> str:
    """stderr of the launcher run on `config` (over a direct-mode default)."""
    read, write = os.pipe()
    base = {"mode": "direct", "argv": [sys.executable, "-c", "pass"], "cwd": str(tmp_path), "env": {},
            "limits": {}, "uid": None, "gid": None, "status_fd": write, "parent_pid": os.getpid()}
    try:
        done = subprocess.run([sys.executable, "-I", "-S", LAUNCHER], capture_output=True, text=True, timeout=30,
                              pass_fds=(write,), env={"MLAB_SANDBOX_CONFIG": json.dumps({**base, **config})})
    finally:
        os.close(write)
        os.close(read)
    return done.stderr


def test_a_missing_bubblewrap_is_named_not_the_script_interpreter(tmp_path):
    err = launch(tmp_path, mode="bwrap", bwrap=str(tmp_path / "no-bwrap"), bwrap_flags=[], bwrap_ops=[])
    assert f"cannot start bubblewrap ({tmp_path / 'no-bwrap'}), the sandbox of {sys.executable}" in err, err
    assert f"cannot start {sys.executable}:" not in err


def test_a_missing_interpreter_is_named(tmp_path):
    err = launch(tmp_path, argv=[str(tmp_path / "no-python"), "x.py"])
    assert f"cannot start {tmp_path / 'no-python'}: No such file or directory" in err, err


def test_a_workspace_it_cannot_enter_is_named(tmp_path):
    err = launch(tmp_path, cwd=str(tmp_path / "gone"))
    assert f"cannot enter the workspace {tmp_path / 'gone'}: No such file or directory" in err, err
