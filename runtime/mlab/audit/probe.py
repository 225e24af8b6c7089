"""Audit check from inside the sandbox: a probe script tries to reach what holds answers.

The probe runs as an agent's script would (the run's Execute Script policy: its workspace,
limits and hidden paths) and tries, for every target, to list it (a folder) or read its
first bytes (a file). It prints one marked JSON line saying what it could reach; anything
reachable is a finding.
"""
from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

PROBE_FILE = "_mlab_audit_probe.py"
MARK = "MLAB-AUDIT-PROBE"

PROBE_SOURCE = '''import json
import os
import sys

mark, targets = sys.argv[1], json.loads(sys.argv[2])
here = os.getcwd()
reached = {}
for label, path in targets:
    seen = None
    try:
        if os.path.isdir(path):
            # the folders above the workspace show its mount point, and only that: not a leak
            entries = [e for e in os.listdir(path) if not (here + "/").startswith(os.path.join(path, e) + "/")]
            seen = f"listed {len(entries)} entries" if entries else None
        elif os.path.exists(path):
            with open(path, "rb") as handle:
                seen = f"read {len(handle.read(64))} bytes"
    except OSError:
        seen = None
    if seen:
        reached[label] = f"{path}: {seen}"
print(mark + " " + json.dumps(reached), flush=True)
'''


def probe_targets(run, prepared_folder: Path) -> list[tuple[str, str]]:
    """(label, absolute path) of everything a script must not reach in this run."""
    import mlabc
    from mlabc.resources import checkout_root, tasks_dir

    from mlab.cache import cache_root
    from mlab.run.script_env import bundled_datasets

    task = run.task
    targets: list[tuple[str, Path]] = [("the run's private answers folder", run.private_dir),
                                       ("the run folder", run.dir)]
    targets += [(f"private answer file {p.name}", p) for p in sorted(run.private_dir.iterdir()) if p.is_file()]
    targets += [("the prepared data (cache)", prepared_folder),
                ("the prepared private files (cache)", prepared_folder / "private"),
                ("the data cache", cache_root()), ("the task's source folder", task.root),
                ("the task's .mlab source", task.root / f"{task.name}.mlab"),
                ("the task's build", task.build.dir), ("the installed task data (mlabc/tasks)", tasks_dir()),
                ("the compiler package", Path(mlabc.__file__).parent)]
    variant = task.variant(run.meta["data"]["variant"])
    source = variant.source
    for rel in filter(None, [source.file, source.value if source.kind in ("csv", "parquet", "folder") else None,
                             variant.prepare.file if variant.prepare else None]):
        targets.append((f"the task's data source {rel}", task.root / rel))
    checkout = checkout_root()
    if checkout is not None:
        targets.append(("the mlab source tree", checkout))
    targets += [(f"the bundled dataset folder {p}", p) for p in bundled_datasets()]
    unique, seen = [], set()
    for label, path in targets:
        real = os.path.realpath(path)
        if real not in seen and os.path.lexists(real):
            seen.add(real)
            unique.append((label, real))
    return unique


def run_probe(run, prepared_folder: Path) -> tuple[list[str], bool]:
    """(what the probe reached, whether the script ran in the bubblewrap sandbox)."""
    from mlab.actions.scripts import script_runner

    run_script = script_runner().run_script
    settings = run.scripts
    workspace = run.workspace.root
    script = workspace / PROBE_FILE
    mark = f"{MARK}-{secrets.token_hex(6)}"
    script.write_text(PROBE_SOURCE, encoding="utf-8")
    try:
        policy = settings.policy(workspace, read_only=tuple(run.workspace.read_only_files()),
                                 timeout_s=min(float(settings.timeout_s), 120.0))
        result = run_script([settings.python, PROBE_FILE, mark, json.dumps(probe_targets(run, prepared_folder))],
                            policy)
    finally:
        script.unlink(missing_ok=True)
    for line in result.output.splitlines():
        if line.startswith(mark + " "):
            reached = json.loads(line[len(mark) + 1:])
            return [f"a script can reach {label} ({where})" for label, where in reached.items()], result.sandboxed
    return [f"the sandbox probe did not report (exit code {result.exit_code}): {result.output.strip()[-300:]}"], \
        result.sandboxed
