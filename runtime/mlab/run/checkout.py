"""Restore the workspace of any step of a run, or any node of a tree search, into a folder (`mlab checkout`)."""
from __future__ import annotations

from pathlib import Path

from mlab.errors import RunError, UsageError
from mlab.run.meta import read_run_meta
from mlab.run.recovery import manifest_at
from mlab.snapshots import ObjectStore, apply_delta, restore_files
from mlab.trace import TRACE, read_trace


def node_manifests(initial: dict[str, str], records: list[dict]) -> dict[int, dict[str, str]]:
    """The workspace of each node of a tree search: its parent's (the initial one for a root) with
    the node's delta applied."""
    found: dict[int, dict[str, str]] = {}
    for record in records:
        number = record.get("node")
        if not isinstance(number, int) or isinstance(number, bool):
            continue
        parent = record.get("parent")
        manifest = dict(found.get(parent, initial) if isinstance(parent, int) else initial)
        apply_delta(manifest, record.get("snapshot") or {})
        found[number] = manifest
    return found


def checkout(run_dir: Path, step: int | None, target: Path, node: int | None = None) -> dict[str, str]:
    """Write a workspace of the run into `target`; returns its manifest.

    step N: as it was after step N (0: as prepared); for a tree search, the workspace of the node
    that step made. node N: the workspace of node N of a tree search. Neither: the final workspace
    (after the last step; for a tree search, the submitted node's). `target` must be empty or
    absent: checking out never overwrites someone's files.
    """
    run_dir = Path(run_dir)
    meta = read_run_meta(run_dir)
    records = read_trace(run_dir / TRACE).records
    if step is not None and node is not None:
        raise UsageError("give --step or --node, not both")
    if step is not None and (step < 0 or step > len(records)):
        raise UsageError(f"run {meta['id']} has steps 0 to {len(records)} (0 is the workspace as prepared); "
                         f"there is no step {step}")
    target = Path(target)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise UsageError(f"{target} exists and is not an empty folder; check out into a new folder")
    if target.resolve() == (run_dir / "workspace").resolve():
        raise UsageError("check out into a new folder, not the run's own workspace")
    store = ObjectStore(run_dir / "objects", durable=False)
    manifest = _chosen(store, meta, records, step, node)
    missing = [rel for rel, digest in manifest.items()
               if not digest.startswith("symlink:") and not store.has(digest)]
    if missing:
        what = f"node {node}" if node is not None else f"step {step if step is not None else len(records)}"
        raise RunError(f"the snapshot of {what} is incomplete: objects for {', '.join(missing[:5])} "
                       f"are missing from {run_dir / 'objects'}")
    restore_files(store, manifest, target)
    return manifest


def _chosen(store: ObjectStore, meta: dict, records: list[dict], step: int | None, node: int | None) -> dict:
    initial = store.get_json(meta["initial_snapshot"])
    nodes = node_manifests(initial, records)
    if node is not None:
        if not nodes:
            raise UsageError(f"run {meta['id']} is not a tree search: it has no nodes; use --step")
        if node not in nodes:
            raise UsageError(f"run {meta['id']} has nodes {', '.join(map(str, sorted(nodes)))}; there is no node {node}")
        return nodes[node]
    if step is None:
        step = len(records)
        if nodes and not records[-1].get("end_reason"):
            raise UsageError(f"the tree search of run {meta['id']} has not ended, so it has submitted no node; "
                             f"pick one with --node N (nodes {', '.join(map(str, sorted(nodes)))})")
    if step and "node" in records[step - 1]:
        return nodes[records[step - 1]["node"]]
    return manifest_at(store, meta, records, step)  # the closing record leads to the submitted node
