"""The score of one snapshot of a run: its submission restored alone, or its whole workspace,
scored by the harness's scorer (`mlab.scoring.score.score_workspace`: the confined reads of the
submission, the timed scorer for runtime metrics). `mlab eval --intermediate` scores every step
with it, and `mlab eval --at` the steps its budgets fall on."""
from __future__ import annotations

import shutil
from pathlib import Path

from mlab.reports.runs import LoadedRun


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
