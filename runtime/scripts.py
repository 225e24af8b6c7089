"""The execute_script primitive: run a workspace Python script through the sandbox.

The script runs with the workspace as its current directory, under the task's script timeout
(or the run's remaining time, whichever is shorter) and memory limit. Its output streams into
output/step-NNNN.log in the run folder while it runs; the observation is the bounded output
and how the script ended, and the compute it used goes into the trace.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .observation import ActionFailed, Observation

_warned_unsandboxed = False


@dataclass
class ScriptSettings:
    """How a run executes scripts (the parts of the sandbox policy that do not change per step)."""

    python: str = sys.executable
    device: str | None = None
    timeout_s: float = 1800.0
    memory_bytes: int | None = None
    hidden: tuple[Path, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    output_dir: Path | None = None
    remaining_s: Callable[[], float] | None = None


def _ending(result, timeout: float) -> str:
    seconds = f"{result.wall_s:.1f} s"
    if result.timed_out:
        return f"The script was stopped after {seconds}: it reached the time limit of {timeout:.0f} s."
    if result.out_of_memory:
        return f"The script was stopped after {seconds}: it used more memory than allowed."
    if result.killed_reason:
        return f"The script was stopped after {seconds}: {result.killed_reason}."
    if result.exit_code == 0:
        return f"The script ran for {seconds} and finished normally (exit status 0)."
    return f"The script ran for {seconds} and failed with exit status {result.exit_code}."


def compute_record(result) -> dict:
    """The accounting of one script run, as the trace records it."""
    return {"wall_s": round(float(result.wall_s), 4), "cpu_s": round(float(result.cpu_s or 0.0), 4),
            "peak_memory_bytes": result.peak_memory_bytes, "exit_code": result.exit_code,
            "timed_out": bool(result.timed_out), "out_of_memory": bool(result.out_of_memory),
            "killed_reason": result.killed_reason, "sandboxed": bool(result.sandboxed)}


def execute_script(ctx, inputs, params) -> Observation:
    global _warned_unsandboxed
    ws = ctx.workspace
    real = ws.readable_file(inputs["script_name"], "script_name")
    rel = ws.relative(real)
    if real.suffix != ".py":
        raise ActionFailed(f"{rel} is not a Python script; only .py files of the workspace can be executed")
    from mlab.sandbox import SandboxPolicy, run_script, sandbox_available

    settings: ScriptSettings = ctx.scripts
    timeout = float(settings.timeout_s)
    if settings.remaining_s is not None:
        timeout = min(timeout, max(settings.remaining_s(), 1.0))
    max_output = int(params.get("max_output_chars") or 10000)
    policy = SandboxPolicy(workspace=ws.root, timeout_s=timeout, memory_bytes=settings.memory_bytes,
                           max_output_chars=max_output, python=settings.python, device=settings.device,
                           hidden=tuple(settings.hidden), network=False, env=dict(settings.env))
    if not _warned_unsandboxed and not sandbox_available():
        _warned_unsandboxed = True
        print("mlab: WARNING: bubblewrap is not available, so scripts run WITHOUT a sandbox (limits "
              "still apply); install it with `apt-get install bubblewrap`", file=sys.stderr)
    live = None
    if settings.output_dir is not None:
        settings.output_dir.mkdir(parents=True, exist_ok=True)
        live = open(settings.output_dir / f"step-{ctx.step:04d}.log", "w", encoding="utf-8")

    def stream(chunk: str) -> None:
        if live is not None:
            live.write(chunk)
            live.flush()

    try:
        result = run_script([settings.python, rel], policy, on_output=stream)
    finally:
        if live is not None:
            live.close()
    output = result.output.rstrip("\n")
    body = output if output.strip() else "(the script printed nothing)"
    text = f"{body}\n\n{_ending(result, timeout)}"
    failed = result.exit_code != 0 or result.timed_out or result.out_of_memory or bool(result.killed_reason)
    return Observation(text, status="ok", compute=compute_record(result),
                       details={"script": rel, "failed": failed})
