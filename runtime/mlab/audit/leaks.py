"""Audit checks on a prepared variant's files: nothing the agent sees gives the answers away.

- A public test table (a CSV/Parquet file whose name says `test`) must not have an answer
  column; a public test .npz must not hold an array named after an answer column.
- No column of any public table may reproduce the answers: joined on the id, a column that
  equals the answer column on every matched row, for at least half the test ids, is a leak.
- No public file may be a byte-for-byte copy of a private file (other than a file the
  variant declares on both sides, such as babylm's vocab.txt, or the task's copy of a vocabulary
  file of its column constraints, kept under private/vocabulary/).
"""
from __future__ import annotations

from pathlib import Path

TABLE_SUFFIXES = (".csv", ".parquet")
MAX_TABLE_BYTES = 512 * 1024 * 1024  # larger public tables are checked by header only
MIN_COVERED = 0.5


def read_table(path: Path, header_only: bool = False):
    """A public CSV (every cell as text) or Parquet table; only its header when asked."""
    import pandas as pd

    if path.suffix.lower() == ".parquet":
        frame = pd.read_parquet(path)
        return frame.head(0) if header_only else frame
    return pd.read_csv(path, dtype=str, nrows=0 if header_only else None, encoding="utf-8-sig")


def _answer_names(answers: list[str]) -> set[str]:
    names = {a.lower() for a in answers}
    return names | {f"{a}s" for a in names}


def leak_findings(variant, public: Path, private: Path) -> list[str]:
    """What in the public files reveals the private answers (empty when nothing does)."""
    findings: list[str] = []
    answers = list(variant.answers)
    id_column = variant.id
    shared = set(variant.public) & set(variant.private)
    findings += _copied_files(public, private, shared)
    if not answers:
        return findings
    answer_table = _answers(variant, private)
    for path in sorted(p for p in public.rglob("*") if p.is_file()):
        rel = path.relative_to(public).as_posix()
        is_test = "test" in path.name.lower()
        suffix = path.suffix.lower()
        if suffix == ".npz" and is_test:
            findings += _npz_findings(path, rel, answers)
        if suffix not in TABLE_SUFFIXES:
            continue
        large = path.stat().st_size > MAX_TABLE_BYTES
        try:
            table = read_table(path, header_only=large)
        except (OSError, ValueError, ImportError) as error:  # an unreadable public table is worth saying
            findings.append(f"public {rel} cannot be read as a table ({type(error).__name__}: {error})")
            continue
        columns = [str(c).strip() for c in table.columns]
        if is_test:
            named = [c for c in columns if c in answers]
            if named:
                findings.append(f"public test file {rel} has the answer column(s) {named}")
        if not large and answer_table is not None and id_column in columns:
            findings += _joined_findings(table, answer_table, id_column, answers, rel)
    return findings


def _answers(variant, private: Path):
    hidden = list(variant.private)
    if not hidden or Path(hidden[0]).suffix.lower() not in TABLE_SUFFIXES or not (private / hidden[0]).is_file():
        return None
    table = read_table(private / hidden[0])
    needed = [variant.id, *variant.answers]
    return table if all(c in table.columns for c in needed) else None


def _joined_findings(table, answers, id_column: str, answer_columns: list[str], rel: str) -> list[str]:
    """Columns of a public table that equal an answer column on the test ids they share."""
    from mlab.scoring.metrics.values import label_key

    table = table.rename(columns=lambda c: str(c).strip())
    keys = {label_key(v): i for i, v in enumerate(answers[id_column])}
    rows = [(keys[k], j) for j, k in enumerate(label_key(v) for v in table[id_column]) if k in keys]
    if len(rows) < max(1, MIN_COVERED * len(keys)):
        return []
    found = []
    answer_rows, table_rows = zip(*rows)
    for answer in answer_columns:
        truth = [label_key(v) for v in answers[answer].iloc[list(answer_rows)]]
        if len(set(truth)) < 2:
            continue  # a constant answer is matched by any constant column: no evidence
        for column in table.columns:
            if column == id_column:
                continue
            values = [label_key(v) for v in table[column].iloc[list(table_rows)]]
            if values == truth:
                found.append(f"public {rel} column `{column}` equals the answers' `{answer}` on "
                             f"{len(rows)} of {len(keys)} test ids (joined on `{id_column}`)")
    return found


def _npz_findings(path: Path, rel: str, answers: list[str]) -> list[str]:
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as archive:
            keys = list(archive.files)
    except Exception as error:
        return [f"public {rel} cannot be read as .npz ({type(error).__name__}: {error})"]
    named = [k for k in keys if k.lower() in _answer_names(answers)]
    return [f"public test file {rel} holds the array(s) {named}, named like the answers"] if named else []


def _copied_files(public: Path, private: Path, shared: set[str]) -> list[str]:
    from mlab.cache import file_sha256
    from mlab.data.vocabulary import VOCABULARY_DIR

    hidden = {}
    for path in (p for p in private.rglob("*") if p.is_file()):
        rel = path.relative_to(private).as_posix()
        if rel not in shared and not rel.startswith(VOCABULARY_DIR + "/"):  # the task's copy of a public file
            hidden.setdefault((path.stat().st_size, file_sha256(path)), rel)
    found = []
    for path in sorted(p for p in public.rglob("*") if p.is_file()):
        key = (path.stat().st_size, None)
        if not any(size == key[0] for size, _ in hidden):
            continue
        match = hidden.get((key[0], file_sha256(path)))
        if match:
            found.append(f"public {path.relative_to(public).as_posix()} is a copy of the private {match}")
    return found
