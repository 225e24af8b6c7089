"""The vocabulary files of a task's column constraints, kept with the private answers.

A constraint such as `column "categories" ranking max 20 from "category_key.csv:id"` checks every
submission against a file of the workspace (a public data file or a starter file). Scoring must
not read the agent's copy, and some scorers see no workspace beside the submission (the exploit
audit, an exported task's verifier), so preparation copies each such file into the private side
of the prepared variant, under VOCABULARY_DIR; every run, export and audit gets it with the
answers, and `mlab.scoring.constraints` reads it there.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from mlab.build import TaskBuild
from mlab.documents.task import Variant
from mlab.cache import file_sha256
from mlab.errors import DataError

VOCABULARY_DIR = "vocabulary"  # private/vocabulary/<file>: the task's copy of each vocabulary file


def vocabulary_files(task: TaskBuild) -> list[str]:
    """The workspace paths of the files the task's constraints draw vocabularies from."""
    submission = task.view.submission
    return sorted({c.vocabulary_file for c in submission.constraints if c.vocabulary_file}) if submission else []


def _starter_file(task: TaskBuild, rel: str) -> Path | None:
    starter = task.view.starter
    path = task.root / starter / rel if starter else None
    return path if path is not None and path.is_file() else None


def vocabulary_digest(task: TaskBuild, variant: Variant) -> dict | None:
    """What the preparation key adds for the vocabulary files (None when the task has none): the
    names, and the content of those taken from the starter (public ones follow from the source)."""
    files = vocabulary_files(task)
    if not files:
        return None
    return {rel: None if rel in variant.public else
            (file_sha256(_starter_file(task, rel)) if _starter_file(task, rel) else "absent") for rel in files}


def keep_vocabularies(task: TaskBuild, variant: Variant, public: Path, private: Path, where: str) -> None:
    """Copy each vocabulary file (from the prepared public files, else the starter) into private/."""
    for rel in vocabulary_files(task):
        source = public / rel if rel in variant.public and (public / rel).is_file() else _starter_file(task, rel)
        if source is None:
            raise DataError(f"{where}: the vocabulary file {rel} of a column constraint is neither a prepared "
                            "public file nor a starter file")
        target = private / VOCABULARY_DIR / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
