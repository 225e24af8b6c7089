"""The execute_script primitive: run a workspace Python script through the sandbox.

The script runs with the workspace as its current directory, under the task's script timeout
(or the run's remaining time, whichever is shorter) and memory limit; the task's read-only
files are handed to the sandbox as such. (Without bubblewrap the sandbox itself warns, once.) Its output streams into
output/step-NNNN.log in the run folder while it runs; the observation is the bounded output
and how the script ended, and the compute it used goes into the trace.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from mlab.observation import ActionFailed, Observation
from mlab.sandbox.accelerator import AcceleratorSampler


_runner = None  # None: mlab.sandbox


def use_script_runner(runner):
    """Run every workspace script through `runner` instead of mlab.sandbox.runner; None restores the sandbox.

    `runner` offers what mlab.sandbox.runner offers to scripts: SandboxPolicy, run_script and
    describe_result (tests hand in a plain child-process stand-in). Returns the runner it replaced.
    """
    global _runner
    previous, _runner = _runner, runner
    return previous


def script_runner():
    """What runs workspace scripts: mlab.sandbox.runner unless `use_script_runner` named another."""
    if _runner is not None:
        return _runner
    import mlab.sandbox.runner

    return mlab.sandbox.runner


def scripts_sandboxed() -> bool:
    """Whether workspace scripts run in bubblewrap's sandbox here (not in a stand-in without it)."""
    available = getattr(script_runner(), "sandbox_available", None)
    return bool(available is not None and available()[0])


@dataclass
class ScriptSettings:
    """How a run executes scripts (the parts of the sandbox policy that do not change per step)."""

    python: str = sys.executable
    device: str | None = None
    timeout_s: float = 1800.0
    memory_bytes: int | None = None
    disk_bytes: int | None = None
    hidden: tuple[Path, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    output_dir: Path | None = None
    remaining_s: Callable[[], float] | None = None
    accelerators: tuple[int, ...] = ()   # the devices whose busy seconds are sampled while a script runs
    on_output: Callable[[str], None] | None = None  # also receives a script's output as it streams (the live display)

    def policy(self, workspace: Path, *, read_only: tuple[Path, ...] = (), timeout_s: float | None = None,
               max_output_chars: int = 10000):
        """The sandbox policy of one script run in `workspace` under these settings."""
        sandbox_policy = script_runner().SandboxPolicy
        return sandbox_policy(workspace=Path(workspace),
                              timeout_s=float(self.timeout_s if timeout_s is None else timeout_s),
                              memory_bytes=self.memory_bytes, disk_bytes=self.disk_bytes,
                              max_output_chars=max_output_chars, python=self.python,
                              device=self.device, hidden=tuple(self.hidden), network=False, env=dict(self.env),
                              read_only=tuple(read_only))

    def run(self, workspace: Path, argv: list[str], read_only: tuple[Path, ...] = ()):
        """Run `python argv...` in workspace; the sandbox's ScriptResult."""
        return script_runner().run_script([self.python, *argv], self.policy(workspace, read_only=read_only))


def compute_record(result) -> dict:
    """The accounting of one script run, as the trace records it (with the accelerator's busy
    seconds when they were sampled)."""
    record = {"wall_s": round(float(result.wall_s), 4), "cpu_s": round(float(result.cpu_s or 0.0), 4),
              "peak_memory_bytes": result.peak_memory_bytes, "exit_code": result.exit_code,
              "timed_out": bool(result.timed_out), "out_of_memory": bool(result.out_of_memory),
              "killed_reason": result.killed_reason, "sandboxed": bool(result.sandboxed)}
    accelerator = getattr(result, "accelerator", None)
    if accelerator is not None:
        record["accelerator"] = accelerator
    return record


def _with_accelerator(result, measured: dict | None):
    """The script's result carrying what the sampler measured (a stand-in runner's own result
    type, without the field, is left as it is)."""
    import dataclasses

    if measured is None or not dataclasses.is_dataclass(result) or \
            "accelerator" not in {f.name for f in dataclasses.fields(result)}:
        return result
    return dataclasses.replace(result, accelerator=measured)


def run_logged(settings: "ScriptSettings", workspace, script: str, log_name: str, *, timeout_s: float,
               **policy_options):
    """Run a workspace script with the run's interpreter in the sandbox (the workspace's read-only
    files kept read-only), its output streamed into settings.output_dir/log_name while it runs when
    the run keeps live output, the busy seconds of settings.accelerators sampled meanwhile.
    ValueError when it cannot be started."""
    policy = settings.policy(workspace.root, read_only=tuple(workspace.read_only_files()), timeout_s=timeout_s,
                             **policy_options)
    live = None
    if settings.output_dir is not None:
        from mlab.confined import open_for_append

        settings.output_dir.mkdir(parents=True, exist_ok=True)
        live = os.fdopen(open_for_append(settings.output_dir, log_name, truncate=True), "w", encoding="utf-8")

    def stream(chunk: str) -> None:
        if live is not None:
            live.write(chunk)
            live.flush()
        if settings.on_output is not None:
            settings.on_output(chunk)

    sampler = AcceleratorSampler.start(settings.accelerators)  # None, no process: no accelerator
    measured = None
    try:
        result = script_runner().run_script([settings.python, script], policy, on_output=stream)
    finally:
        if sampler is not None:
            measured = sampler.stop()
        if live is not None:
            live.close()
    return _with_accelerator(result, measured)


def result_text(result) -> str:
    """What a script run shows: its output (or that it printed nothing) and how it ended."""
    output = result.output.rstrip("\n")
    return f"{output if output.strip() else '(the script printed nothing)'}\n\n{script_runner().describe_result(result)}"


def ran_to_the_end(result) -> bool:
    """Exit status 0, and not stopped for time, memory or any other reason."""
    return result.exit_code == 0 and not (result.timed_out or result.out_of_memory or result.killed_reason)


def execute_script(ctx, inputs, params) -> Observation:
    ws = ctx.workspace
    real = ws.readable_file(inputs["script_name"], "script_name")
    rel = ws.relative(real)
    if real.suffix != ".py":
        raise ActionFailed(f"{rel} is not a Python script; only .py files of the workspace can be executed")
    settings: ScriptSettings = ctx.scripts
    timeout = float(settings.timeout_s)
    if settings.remaining_s is not None:
        timeout = min(timeout, max(settings.remaining_s(), 1.0))
    max_output = int(params.get("max_output_chars") or 10000)
    try:
        result = run_logged(settings, ws, rel, f"step-{ctx.step:04d}.log", timeout_s=timeout,
                            max_output_chars=max_output)
    except ValueError as problem:  # e.g. the configured interpreter does not exist
        raise ActionFailed(f"the script could not be started: {problem}") from None
    text = result_text(result)
    failed = not ran_to_the_end(result)
    return Observation(text, status="ok", compute=compute_record(result),
                       details={"script": rel, "failed": failed})
