"""Shared fixtures and helpers of the sandbox tests (imported explicitly by those test files).

Everything a test script does is bounded: a few seconds of wall time, a memory
limit, a process cap. Scripts are written into a run folder laid out like a real
one (runs/<id>/workspace next to runs/<id>/private and another run).
"""
from __future__ import annotations

import os
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from mlab.sandbox import runner as sandbox
from needs import missing
from mlab.sandbox.runner import SandboxPolicy, ScriptResult, run_script

MiB = 1 << 20


def bubblewrap_reason() -> str | None:
    """None when scripts can be sandboxed here, else why not."""
    usable, reason = sandbox._probe_bubblewrap()
    return None if usable else reason


def skip_without_bubblewrap() -> None:
    reason = bubblewrap_reason()
    if reason is not None:
        missing(f"bubblewrap is not installed: {reason}" if "not installed" in reason
                else f"bubblewrap cannot sandbox here: {reason}")


@pytest.fixture(params=["bubblewrap", "no-sandbox"])
def mode(request, monkeypatch) -> str:
    """Runs a test once inside bubblewrap (skipped where it is missing) and once without."""
    if request.param == "bubblewrap":
        skip_without_bubblewrap()
        monkeypatch.delenv(sandbox.NO_SANDBOX_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(sandbox.NO_SANDBOX_VARIABLE, "1")
    return request.param


@pytest.fixture
def sandboxed(monkeypatch) -> None:
    """For cases that only a sandbox can defend: skipped with the reason where it is missing."""
    skip_without_bubblewrap()
    monkeypatch.delenv(sandbox.NO_SANDBOX_VARIABLE, raising=False)


@dataclass
class RunFolders:
    """A runs/ folder with this run's workspace and private/, another run, and a data cache."""

    runs: Path
    workspace: Path
    private: Path
    other_workspace: Path
    cache: Path

    def policy(self, **changes) -> SandboxPolicy:
        settings = dict(workspace=self.workspace, timeout_s=20.0, memory_bytes=512 * MiB,
                        max_processes=64)
        settings.update(changes)
        return SandboxPolicy(**settings)

    def run(self, code: str, name: str = "script.py", on_output=None, **changes) -> ScriptResult:
        """Write code as a script into the workspace and run it with the interpreter."""
        (self.workspace / name).write_text(textwrap.dedent(code))
        policy = self.policy(**changes)
        return run_script([policy.python, name], policy, on_output=on_output)


@pytest.fixture
def folders(tmp_path, monkeypatch) -> RunFolders:
    runs = tmp_path / "runs"
    workspace = runs / "20240101-000000-aaaa" / "workspace"
    private = runs / "20240101-000000-aaaa" / "private"
    other = runs / "20240101-000000-bbbb" / "workspace"
    cache = tmp_path / "cache"
    for folder in (workspace, private, other, cache / "house-price"):
        folder.mkdir(parents=True)
    (private / "answers.csv").write_text("Id,SalePrice\n1,SECRET-ANSWER\n")
    (other / "secret.txt").write_text("SECRET-OTHER-RUN\n")
    (cache / "house-price" / "answers.csv").write_text("SECRET-CACHE\n")
    # World-readable on purpose: only the sandbox, not file modes, keeps them out of reach.
    for path in (private, private / "answers.csv", other, other / "secret.txt"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    monkeypatch.setenv("MLAB_CACHE", str(cache))
    return RunFolders(runs, workspace, private, other, cache)


def processes_with(marker: str) -> list[int]:
    """Pids of living processes whose command line contains marker."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ")
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state not in "ZX" and int(name) != os.getpid():
            found.append(int(name))
    return found


def zombie_children() -> list[int]:
    """Children of this test process that died and were never reaped."""
    me = os.getpid()
    zombies = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == "Z" and int(fields[1]) == me:
            zombies.append(int(name))
    return zombies


PYTHON = sys.executable
