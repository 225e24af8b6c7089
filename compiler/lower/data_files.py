"""The checks of a task's files that need their contents: the baseline script in the starter
folder, a bundled CSV's text and header, scikit-learn's dataset names.

Whatever a run would find broken in the task's own files is reported here, located, before
any script runs; what only running can show is the runtime's `task error`.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

from .. import ast as A
from ..values import Reporter, closest, did_you_mean

# scikit-learn's bundled datasets that load offline as one table (`as_frame=True`)
SKLEARN_DATASETS = ("load_breast_cancer", "load_diabetes", "load_digits", "load_iris", "load_linnerud",
                    "load_wine")


def normalise_pattern(pattern: str) -> str:
    """A workspace path or pattern without a leading './' or a trailing '/', as the runtime spells it."""
    text = pattern.replace("\\", "/").strip()
    while text.startswith("./"):
        text = text[2:]
    return text.rstrip("/") or "."


def check_sklearn_name(value: str, span, report: Reporter) -> None:
    if value not in SKLEARN_DATASETS:
        report.error("E405", f"`{value}` is not a bundled scikit-learn dataset", span,
                     hint=did_you_mean(value, SKLEARN_DATASETS, "the bundled datasets"))


def check_baseline_script(decl: A.Task, ir: dict, root: Path, report: Reporter) -> None:
    """`baseline run "script"` must name a file of the starter folder (the run starts it there)."""
    baseline, starter = ir.get("baseline"), ir.get("starter")
    if not baseline or baseline.get("kind") != "run" or not baseline.get("script") or not starter:
        return
    folder = root / starter
    if not folder.is_dir():
        return  # E501 already says so
    script = normalise_pattern(baseline["script"])
    if (folder / script).is_file():
        return
    entry = next(e for e in decl.entries if isinstance(e, A.BaselineRun))
    scripts = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.py") if p.is_file())
    hint = did_you_mean(script, scripts, "its scripts") if scripts else "the starter folder holds no Python script"
    report.error("E508", f"baseline script {baseline['script']!r} is not in the starter folder {starter!r}",
                 entry.script.span, hint=hint)


def check_data_files(decl: A.Task, ir: dict, root: Path, report: Reporter) -> None:
    """Each data variant bundled as a CSV: UTF-8 text, a header naming the declared columns, rows."""
    for data in (e for e in decl.entries if isinstance(e, A.Data)):
        variant = ir["data"].get(data.name.value)
        source = (variant or {}).get("source") or {}
        if source.get("kind") != "csv":
            continue
        entry = next(e for e in data.entries if isinstance(e, A.Source))
        _check_csv(root / source["value"], source["value"], data, entry, variant, report)


def _check_csv(path: Path, rel: str, data: A.Data, source: A.Source, variant: dict, report: Reporter) -> None:
    try:
        raw = path.read_bytes()
    except OSError:
        return  # a missing file is E502
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        start = error.start
        line_start = raw.rfind(b"\n", 0, start) + 1
        line = raw.count(b"\n", 0, start) + 1
        column = len(raw[line_start:start].decode("utf-8", errors="replace")) + 1
        report.error("E511", f"data file {rel!r} is not valid UTF-8: line {line}, column {column} "
                     f"(byte 0x{raw[start]:02x})", source.value.span,
                     hint="save the file as UTF-8, or convert it to Parquet")
        return
    rows = csv.reader(io.StringIO(text))
    header = next(rows, None)
    if not header:
        report.error("E510", f"data file {rel!r} is empty", source.value.span,
                     hint="a CSV source needs a header line and at least one row")
        return
    if not any(any(cell.strip() for cell in row) for row in rows):
        report.error("E510", f"data file {rel!r} has a header and no rows", source.value.span,
                     hint="a CSV source needs at least one row under its header")
    columns = [name.strip() for name in header]
    for what, value in _declared_columns(data):
        if value.value not in columns:
            if len(columns) <= 12:
                hint = did_you_mean(value.value, columns, "its header has")
            else:
                guess = closest(value.value, columns)
                hint = (f"did you mean `{guess}`? " if guess else "") + f"its header has {len(columns)} columns"
            report.error("E509", f"{what} {value.value!r} is not a column of {rel!r}", value.span, hint=hint)


def _declared_columns(data: A.Data):
    """(what, string node) for each column a data variant names: answers, id, split column."""
    for entry in data.entries:
        if isinstance(entry, A.Answers) and isinstance(entry.value, A.List):
            yield from (("answer column", item) for item in entry.value.items if isinstance(item, A.Str))
        elif isinstance(entry, A.IdColumn) and isinstance(entry.value, A.Str):
            yield "id column", entry.value
        elif isinstance(entry, A.Split) and entry.method.value in ("group", "time") and entry.args \
                and isinstance(entry.args[0], A.Str):
            yield f"`split {entry.method.value}` column", entry.args[0]
