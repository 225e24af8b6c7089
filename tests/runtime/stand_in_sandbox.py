"""A minimal stand-in for mlab.sandbox with the same API, for tests of the runtime core.

It runs the script as a plain child process in its own session, with the timeout and output
bound of the policy, and reports the kernel's accounting of it. It is NOT a sandbox; tests use
it where they check the harness around scripts (trace, compute, resume), not the confinement.
The policy and result types and describe_result are mlab.sandbox's own; the search engine's
isolation, time-limit and resume tests run once with the real sandbox too (script_sandbox in
tests/search/conftest.py).
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from typing import Callable

from mlab.sandbox.runner import SandboxPolicy, ScriptResult, describe_result  # the real types, not copies

__all__ = ["SandboxPolicy", "ScriptResult", "describe_result", "run_script", "sandbox_available"]


def sandbox_available() -> tuple[bool, str]:
    return False, "this is the tests' stand-in, not a sandbox"


def run_script(argv: list[str], policy: SandboxPolicy,
               on_output: Callable[[str], None] | None = None) -> ScriptResult:
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
