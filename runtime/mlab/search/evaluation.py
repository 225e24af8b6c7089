"""Evaluating a node: its code written into its own copy of its parent's workspace, run there in the
sandbox under the run's limits, its validation score read, its submission checked.

Each node's workspace is a fresh folder (nodes/slot-N in the run folder), made from the object
store before its script runs, and each script runs in a sandbox of its own: so nodes evaluated
at once never see each other's files, and a node sees nothing a node before it left — not its
files, nor the folder's extended attributes, mode or times, nor an IPC object (each sandbox has
its own IPC namespace), nor a key (the sandbox's seccomp filter refuses the keyring calls). The
only thing carried from one node's folder to the next node's of the same thread is read-only
files the sandbox held read-only, unchanged (the same file, moved rather than copied again: a
script cannot change, link or relabel a file bound read-only). What the script changed is
stored as a delta from the parent's workspace; the folders are removed when the search ends.
The parent's submission files are left out of the copy, so a child that writes none is not
credited with its parent's.

A node is valid only when its script ran to the end (exit 0, not stopped), a validation score was
read (by the declared pattern, or by the fast model's review that also calls the run buggy or not),
and its submission passes the task's own format check (`check_submission` against the public test
ids, for a tabular metric; other metric kinds have no submission table to check).
"""
from __future__ import annotations

import itertools
import math
import os
import re
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from mlab.actions.scripts import compute_record, ran_to_the_end, result_text, run_logged
from mlab.actions.workspace import Workspace
from mlab.confined import Refused
from mlab.errors import MlabError
from mlab.snapshots import Delta, Snapshotter, restore_files
from mlab.tree import file_identity, remove_tree

NODES_DIR = "nodes"
VALIDATION_SUBMISSION = "validation_submission.csv"  # as mlab.scoring.validation names it


@dataclass
class Evaluation:
    """What running one node's script gave, before the score is read."""
    output: str  # the script's (bounded) output followed by how it ended
    compute: dict | None
    ran: bool  # exit 0, not stopped by a limit
    delta: Delta
    manifest: dict[str, str]  # the node's workspace
    submission_problem: str | None  # None: the submission passes the format check
    holdout: float | None = None
    holdout_problem: str | None = None
    notes: list[str] = field(default_factory=list)


class NodeEvaluator:
    """Runs nodes of one run: `evaluate` is safe to call from several threads at once."""

    def __init__(self, run, code_file: str, holdout: bool):
        self.run = run
        self.code_file = code_file
        self.holdout = holdout
        task = run.task
        self.read_only = list(task.view.read_only)
        self.metric = task.view.metric
        self.submission = task.view.submission
        self.variant = task.variant(run.meta["data"]["variant"])
        self.submission_file = self.submission.file if self.submission and self.submission.file else "submission.csv"
        self.root = run.dir / NODES_DIR
        self._local = threading.local()   # this thread's slot folder and the files kept in it
        self._slot_numbers = itertools.count(1)
        self._test_ids = None
        if self.metric.kind == "tabular":
            from mlab.scoring.validation import public_test_ids

            try:
                self._test_ids = public_test_ids(run, self.variant)
            except MlabError as why:
                raise MlabError(f"task {task.name}: node submissions cannot be checked: {why}") from None

    # -- one node ------------------------------------------------------------------------
    def evaluate(self, number: int, code: str, parent_manifest: dict[str, str], timeout_s: float) -> Evaluation:
        store = self.run.store
        base = {rel: digest for rel, digest in parent_manifest.items()
                if rel not in (self.submission_file, VALIDATION_SUBMISSION)}
        folder, kept = self._prepare_slot(base)
        restore_files(store, base, folder, current=kept)
        store.copy_to(store.put_bytes(code.encode("utf-8", "surrogatepass")), folder, self.code_file)
        workspace = Workspace(folder, self.read_only)
        result = self._run_script(number, workspace, timeout_s)
        snapshotter = Snapshotter(folder, store, parent_manifest)
        delta = snapshotter.scan()
        scanned = dict(snapshotter.manifest)
        notes = self._keep_read_only(workspace, parent_manifest, delta, snapshotter.manifest)
        notes += [f"left out of the node's snapshot: {why}" for why in snapshotter.refused.values()]
        evaluation = Evaluation(result_text(result), compute_record(result), ran_to_the_end(result), delta,
                                dict(snapshotter.manifest), self.check_submission(folder), notes=notes)
        if self.holdout:
            evaluation.holdout, evaluation.holdout_problem = self.holdout_score(folder)
        # read-only files a sandbox held read-only are the same files now: the thread's next node may take them
        self._local.kept = {rel: (digest, file_identity(folder / rel)) for rel, digest in scanned.items()
                            if getattr(result, "sandboxed", False) and workspace.is_read_only(rel)}
        return evaluation

    # -- this thread's slot -------------------------------------------------------------------
    def _prepare_slot(self, base: dict[str, str]) -> tuple[Path, dict[str, str]]:
        """A fresh folder for the node, holding this thread's kept read-only files that the node's
        workspace holds as they are (moved from the thread's previous folder, which is removed);
        (the folder, those files with their digests)."""
        previous = getattr(self._local, "folder", None)
        left = getattr(self._local, "kept", {}) if previous is not None else {}
        self._local.kept = {}
        folder = self.root / f"slot-{next(self._slot_numbers)}"
        if os.path.lexists(folder):
            _set_aside(folder)   # left by a run killed while evaluating a node
        folder.mkdir(parents=True)
        self._local.folder = folder
        kept = {}
        for rel, (digest, identity) in left.items():
            if base.get(rel) != digest or file_identity(previous / rel) != identity:
                continue
            try:
                (folder / rel).parent.mkdir(parents=True, exist_ok=True)
                os.rename(previous / rel, folder / rel)
            except OSError:
                continue   # written afresh from the store
            kept[rel] = digest
        if previous is not None:
            _set_aside(previous)
        return folder, kept

    def close(self) -> None:
        """Remove the slots."""
        if self.root.is_dir():
            for slot in self.root.iterdir():
                if slot.name.startswith(("slot-", "set-aside-")):
                    try:
                        remove_tree(slot)
                    except OSError:  # a folder the script made unreadable: left behind
                        pass

    def _run_script(self, number: int, workspace: Workspace, timeout_s: float):
        try:
            return run_logged(self.run.scripts, workspace, self.code_file, f"node-{number:04d}.log",
                              timeout_s=max(timeout_s, 1.0))
        except ValueError as problem:  # e.g. the configured interpreter does not exist
            raise MlabError(f"node {number}'s script could not be started: {problem}") from None

    def _keep_read_only(self, workspace: Workspace, parent: dict, delta: Delta, manifest: dict) -> list[str]:
        """Read-only files a script changed keep the parent's contents (as a linear run puts them back)."""
        touched = [rel for rel in [*delta.changed, *delta.removed] if rel in parent and workspace.is_read_only(rel)]
        for rel in touched:
            delta.changed.pop(rel, None)
            if rel in delta.removed:
                delta.removed.remove(rel)
            manifest[rel] = parent[rel]
        return [f"read-only file(s) {', '.join(touched)} were changed; the node keeps them as they were"] \
            if touched else []

    # -- the submission --------------------------------------------------------------------
    def check_submission(self, folder: Path) -> str | None:
        """None when the node's submission passes the task's format check, else what is wrong."""
        if self._test_ids is None:
            return None
        from mlab.scoring.constraints import VocabularyError, load_rules
        from mlab.scoring.score import copy_submission
        from mlab.scoring.submission import MAX_SUBMISSION_BYTES, SubmissionError, check_submission

        scratch = Path(tempfile.mkdtemp(prefix="mlab-node-"))
        try:
            path = scratch / Path(self.submission_file).name
            try:
                copy_submission(folder, self.submission_file, path, MAX_SUBMISSION_BYTES)
            except (FileNotFoundError, NotADirectoryError):
                return f"no submission: the script wrote no {self.submission_file}"
            except Refused as why:
                return str(why)
            try:
                rules = load_rules(self.submission.constraints, self.run.private_dir) if self.submission else ()
                check_submission(path, self._test_ids, self.variant.id, self.metric.columns, self.metric.name,
                                 list(self.submission.columns) if self.submission else [], rules=rules)
            except (SubmissionError, VocabularyError) as problem:
                return str(problem)
            return None
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def holdout_score(self, folder: Path) -> tuple[float | None, str | None]:
        """The task's metric on the node's VALIDATION_SUBMISSION against the harness's private
        validation answers (never the test answers); (None, why) when there is none."""
        from mlab.data.splits import VALIDATION_FILE
        from mlab.scoring.metrics.tabular import score as metric_score
        from mlab.scoring.metrics.values import MetricError
        from mlab.scoring.score import copy_submission
        from mlab.scoring.submission import (MAX_SUBMISSION_BYTES, AnswersError, SubmissionError, check_submission,
                                             load_answers)

        id_column = self.variant.id
        params = dict(self.metric.params)
        try:
            answers = load_answers(self.run.private_dir / VALIDATION_FILE, id_column, list(self.metric.columns),
                                   self.metric.name, params)
        except AnswersError as why:
            raise MlabError(f"task {self.run.task.name}: the validation answers cannot be read: {why}") from None
        scratch = Path(tempfile.mkdtemp(prefix="mlab-holdout-"))
        try:
            path = scratch / VALIDATION_SUBMISSION
            try:
                copy_submission(folder, VALIDATION_SUBMISSION, path, MAX_SUBMISSION_BYTES)
            except (FileNotFoundError, NotADirectoryError):
                return None, f"no {VALIDATION_SUBMISSION} (predictions for {VALIDATION_FILE})"
            except Refused as why:
                return None, str(why)
            try:
                aligned = check_submission(path, list(answers[id_column]), id_column, self.metric.columns,
                                           self.metric.name, list(self.submission.columns) if self.submission else [],
                                           kind="validation")
                value = float(metric_score(self.metric.name, answers, aligned,
                                            [c for c in self.metric.columns if c != id_column], params))
            except (SubmissionError, MetricError) as problem:
                return None, str(problem)
            return (value, None) if math.isfinite(value) else (None, "the holdout score is not a finite number")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


def _set_aside(folder: Path) -> None:
    """Remove a slot, or where that fails, move it out of the way (removed when the search ends)."""
    try:
        remove_tree(folder)
    except OSError:
        os.rename(folder, folder.with_name(f"set-aside-{folder.name}-{os.getpid()}-{id(folder)}"))


def score_by_pattern(output: str, pattern: str, group: int | str = 1) -> float | None:
    """The last value the pattern captures in the output, as a number; None when none is read."""
    try:
        found = list(re.finditer(pattern, output, re.M))
    except re.error:
        return None
    for match in reversed(found):
        try:
            text = match.group(group)
        except (IndexError, KeyError):
            return None
        try:
            value = float(str(text).strip().replace(",", ""))
        except (TypeError, ValueError):
            continue
        if math.isfinite(value):
            return value
    return None

