"""The score of one snapshot of a run: its submission restored alone, or its whole workspace,
scored by the harness's scorer (`mlab.scoring.score.score_workspace`: the confined reads of the
submission, the timed scorer for runtime metrics). `mlab eval --intermediate` scores every step
with it, and `mlab eval --at` the steps its budgets fall on."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from mlab.reports.runs import LoadedRun, record_workspaces


def score_snapshot(run: LoadedRun, task, store, step: int, file: str, digest: str | None,
                    whole: bool, folder: Path) -> tuple[float | None, str | None, dict | None]:
    """(score, why there is none, the side-by-side baseline of a timed metric) of one step: its
    submission restored alone, or the whole workspace (`whole`: a metric that may read more than
    the submission, or a linked submission)."""
    from mlab.run.checkout import checkout
    from mlab.scoring.score import score_workspace
    from mlab.snapshots import restore_files

    if not whole and digest is not None and not store.has(digest):
        return None, f"the snapshot object of {file} at step {step} is missing from {run.dir / 'objects'}", None
    try:
        if whole:
            checkout(run.dir, step, folder)
        elif digest is None:
            folder.mkdir()
        else:
            restore_files(store, {file: digest}, folder)
        score = score_workspace(task, run.variant, folder, run.dir / "private")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return score.value, score.detail, score.baseline


def step_workspaces(run: LoadedRun, store) -> list[dict]:
    """The workspace manifest after every step (0: as prepared); a tree node's is its parent's
    plus its delta. Raises what reading the initial snapshot raises."""
    initial = dict(store.get_json(run.meta["initial_snapshot"]))
    return [initial] + [after for _, after in record_workspaces(initial, run.records)]


def snapshot_key(manifest: dict, file: str, tabular: bool) -> tuple[str, str | None, bool]:
    """(what a snapshot's score depends on, the submission's digest, whether the whole workspace
    is scored). A tabular metric reads the submission alone: each distinct one is scored once.
    Other metrics, and a linked submission, need the whole workspace of every changed step."""
    from mlab.snapshots import SYMLINK_PREFIX

    digest = manifest.get(file)
    whole = not tabular or bool(digest and digest.startswith(SYMLINK_PREFIX))
    if whole:
        text = json.dumps(manifest, sort_keys=True).encode()
        return "workspace:" + hashlib.sha256(text).hexdigest(), digest, True
    return f"{file}:{digest or 'none'}", digest, False


def judge_snapshot(value: float | None, timed: dict | None, baseline: float | None, direction: str | None,
                   threshold: float | None) -> tuple[float | None, bool]:
    """(improvement, success) of a snapshot's score by the task's rule; a timed metric's score is
    compared with the starter timed beside it, and its rounds must agree."""
    from mlab.scoring.metrics.tabular import improvement, is_success
    from mlab.scoring.metrics.timing import timed_rounds_succeed

    reference = (timed or {}).get("value", baseline)
    if value is None or reference is None or direction is None:
        return None, False
    gain = improvement(value, reference, direction)
    return gain, (gain is not None and threshold is not None and is_success(gain, threshold)
                  and timed_rounds_succeed((timed or {}).get("paired_speedups"), threshold))
