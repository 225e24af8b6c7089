"""The sandbox settings for scripts that scoring runs (timed metrics, task evaluators, baselines).

Scoring runs scripts outside the agent loop, in scratch copies of a workspace, under the
same policy as the agent's own scripts: the task's limits for its data variant, threads
sized to the task's CPUs, and everything that holds answers hidden (the run folder with its
private/, the caches, the task sources, mlab itself).
"""
from __future__ import annotations

import shutil
import stat
import sys
from pathlib import Path

from mlab.confined import copy_tree
from mlab.limits import resolve_limits
from mlab.tree import walk_tree
from mlab.actions.scripts import ScriptSettings


def scoring_sandbox(task, variant_name: str, workspace: Path, private_dir: Path, *, python: str | None = None,
                    device: str | None = None) -> ScriptSettings:
    """The settings for scoring a submission of `task` found in `workspace`."""
    from mlab.run.script_env import hidden_paths, thread_env

    limits = resolve_limits(task.view.limits, task.variant(variant_name).limits)
    # The workspace's parent is the run folder (or a scratch folder): hidden with all it holds.
    hidden = hidden_paths(Path(workspace).resolve().parent, task) + (Path(private_dir).resolve(),)
    return ScriptSettings(python=python or sys.executable, device=device,
                          timeout_s=float(limits.script_timeout or 1800.0), memory_bytes=limits.memory,
                          disk_bytes=limits.disk, hidden=hidden, env=thread_env(task.view.hardware.cpus))


def copy_files(source: Path, target: Path) -> list[str]:
    """Copy a workspace's plain files and folders into target, merging; returns what was left out.

    Only regular files with a single name are copied, each through the confined reader
    (mlab.confined): followed by the harness, a link, a hard link or a special file could bring
    a file the script may not see (the run's private answers) into its copy.
    """
    return copy_tree(Path(source), Path(target), skip=lambda rel: "__pycache__" in rel.split("/"),
                     linked=stored_links(Path(source)))


def stored_links(workspace: Path):
    """A test of whether a file with several names in a run's workspace is a hard link to an object
    of the run's store (objects/ beside the workspace), as the harness links read-only data in:
    such a file's contents are the run's own, never a file from outside."""
    inodes: set | None = None

    def linked(info) -> bool:
        nonlocal inodes
        if inodes is None:
            inodes = set()
            for _, _, found in walk_tree(Path(workspace).parent / "objects"):
                if stat.S_ISREG(found.st_mode) and found.st_nlink > 1:
                    inodes.add((found.st_dev, found.st_ino))
        return (info.st_dev, info.st_ino) in inodes
    return linked


def fresh_copy(source: Path, target: Path, leave_out: tuple[str, ...] = ()) -> Path:
    """A copy of a workspace (see copy_files) without the named files."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    copy_files(source, target)
    for name in leave_out:
        path = target / name
        if path.is_file() or path.is_symlink():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
    return target


def output_tail(result, limit: int = 600) -> str:
    """The last lines of a script's output, for a message."""
    text = (result.output or "").strip()
    return text[-limit:] if text else "(no output)"


def how_it_ended(result) -> str | None:
    """Why a script run failed, in words; None when it exited with code 0."""
    if result.killed_reason:
        return f"was stopped: {result.killed_reason}"
    if result.exit_code != 0:
        return f"ended with exit code {result.exit_code}"
    return None
