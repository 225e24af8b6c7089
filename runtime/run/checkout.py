"""Restore the workspace of any step of a run into a folder (`mlab checkout`)."""
from __future__ import annotations

from pathlib import Path

from mlab.errors import RunError, UsageError
from mlab.run.folder import manifest_at, read_run_meta
from mlab.snapshots import ObjectStore, restore_files
from mlab.trace import TRACE, read_trace


def checkout(run_dir: Path, step: int, target: Path) -> dict[str, str]:
    """Write the workspace as it was after `step` (0: as prepared) into `target`; returns its manifest.

    `target` must be empty or absent: checking out never overwrites someone's files.
    """
    run_dir = Path(run_dir)
    meta = read_run_meta(run_dir)
    records = read_trace(run_dir / TRACE).records
    if step < 0 or step > len(records):
        raise UsageError(f"run {meta['id']} has steps 0 to {len(records)} (0 is the workspace as prepared); "
                         f"there is no step {step}")
    target = Path(target)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise UsageError(f"{target} exists and is not an empty folder; check out into a new folder")
    if target.resolve() == (run_dir / "workspace").resolve():
        raise UsageError("check out into a new folder, not the run's own workspace")
    store = ObjectStore(run_dir / "objects", durable=False)
    manifest = manifest_at(store, meta, records, step)
    missing = [rel for rel, digest in manifest.items()
               if not digest.startswith("symlink:") and not store.has(digest)]
    if missing:
        raise RunError(f"the snapshot of step {step} is incomplete: objects for {', '.join(missing[:5])} "
                       f"are missing from {run_dir / 'objects'}")
    restore_files(store, manifest, target)
    return manifest
