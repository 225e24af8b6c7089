"""A minimal stand-in for mlab.sandbox with the same API, for tests of the runtime core.

It runs the script as a plain child process in its own session, with the timeout and output
bound of the policy, and reports the kernel's accounting of it. It is NOT a sandbox; tests use
it where they check the harness around scripts (trace, compute, resume), not the confinement.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping


@dataclass
class SandboxPolicy:
    workspace: Path
    timeout_s: float
    memory_bytes: int | None
    max_output_chars: int = 10000
    python: str = sys.executable
    device: str | None = None
    hidden: tuple = ()
    network: bool = False
    env: Mapping[str, str] = field(default_factory=dict)
    read_only: tuple = ()
    max_processes: int = 512
    max_streamed_chars: int = 1_000_000
    disk_bytes: int | None = None


@dataclass
class ScriptResult:
    exit_code: int | None
    timed_out: bool
    out_of_memory: bool
    killed_reason: str | None
    output: str
    output_chars: int
    wall_s: float
    cpu_s: float
    peak_memory_bytes: int | None
    sandboxed: bool


def sandbox_available() -> tuple[bool, str]:
    return False, "this is the tests' stand-in, not a sandbox"


def describe_result(result: ScriptResult) -> str:
    if result.timed_out:
        return "The script was stopped: it reached the time limit."
    return f"The script ended with exit code {result.exit_code} ({result.wall_s:.1f} s wall)."


def run_script(argv: list[str], policy: SandboxPolicy, on_output: Callable[[str], None] | None = None) -> ScriptResult:
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONUNBUFFERED": "1", **dict(policy.env)}
    child = subprocess.Popen(argv, cwd=policy.workspace, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             start_new_session=True, env=env)
    timed_out = False
    try:
        data, _ = child.communicate(timeout=policy.timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(child.pid, signal.SIGKILL)
        data, _ = child.communicate()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    text = data.decode("utf-8", errors="replace")
    if on_output is not None and text:
        on_output(text)
    shown = text
    if len(text) > policy.max_output_chars:
        half = policy.max_output_chars // 2
        shown = text[:half] + f"\n[... {len(text) - 2 * half} characters omitted ...]\n" + text[-half:]
    return ScriptResult(exit_code=None if timed_out else child.returncode, timed_out=timed_out, out_of_memory=False,
                        killed_reason=None, output=shown, output_chars=len(text),
                        wall_s=time.monotonic() - started, cpu_s=max(0.0, usage.ru_utime + usage.ru_stime - before.ru_utime - before.ru_stime),
                        peak_memory_bytes=usage.ru_maxrss * 1024, sandboxed=False)
