"""The describe_table primitive: a data table of the workspace profiled, so "look at the data"
needs no Python helper: its rows and columns, each column's type, missing values, distinct
values and summary statistics (numbers: min, mean, max, standard deviation; other columns: the
most frequent values). CSV, TSV and Parquet; pandas is imported when the action runs."""
from __future__ import annotations

from mlab.observation import ActionFailed, Observation

READERS = {".csv": "csv", ".tsv": "tsv", ".txt": "csv", ".parquet": "parquet"}


def _read(real, rel: str, max_rows: int):
    import pandas as pd

    kind = READERS.get(real.suffix.lower())
    if kind is None:
        raise ActionFailed(f"{rel} is not a table this action reads (CSV, TSV or Parquet: "
                           f"{', '.join(sorted(READERS))})")
    try:
        if kind == "parquet":
            frame = pd.read_parquet(real)
            return frame.head(max_rows), len(frame)
        frame = pd.read_csv(real, sep="\t" if kind == "tsv" else ",", nrows=max_rows + 1, low_memory=False)
    except ImportError as problem:
        raise ActionFailed(f"reading {rel} needs a package that is not installed: {problem}") from None
    except (ValueError, OSError, UnicodeDecodeError) as problem:
        raise ActionFailed(f"cannot read {rel} as a table: {str(problem).splitlines()[0] if str(problem) else problem}") \
            from None
    return frame.head(max_rows), (len(frame) if len(frame) <= max_rows else None)


def _number(value) -> str:
    value = float(value)
    return f"{value:.4g}" if abs(value) < 1e6 else f"{value:.4e}"


def _kind(column) -> str:
    """The column's type in words that do not depend on the pandas version: int, float, bool,
    date or text (anything else by its dtype's name)."""
    import pandas as pd

    types = pd.api.types
    if types.is_bool_dtype(column):
        return "bool"
    if types.is_integer_dtype(column):
        return "int"
    if types.is_float_dtype(column):
        return "float"
    if types.is_datetime64_any_dtype(column):
        return "date"
    if types.is_string_dtype(column) or types.is_object_dtype(column):
        return "text"
    return str(column.dtype)


def _summary(column) -> str:
    import pandas as pd

    present = column.dropna()
    if present.empty:
        return "all missing"
    if pd.api.types.is_bool_dtype(column) or not pd.api.types.is_numeric_dtype(column):
        counts = present.astype(str).value_counts().head(3)
        return "top: " + ", ".join(f"{value[:30]!s} ({count})" for value, count in counts.items())
    return (f"min {_number(present.min())}, mean {_number(present.mean())}, max {_number(present.max())}, "
            f"std {_number(present.std()) if len(present) > 1 else '-'}")


def describe_table(ctx, inputs, params) -> Observation:
    ws = ctx.workspace
    real = ws.readable_file(inputs["file_name"], "file_name")
    rel = ws.relative(real)
    max_rows, max_columns = int(params.get("max_rows") or 100000), int(params.get("max_columns") or 60)
    frame, total = _read(real, rel, max_rows)
    rows = f"{total:,} rows" if total is not None else f"more than {max_rows:,} rows (described: the first {max_rows:,})"
    lines = [f"{rel}: {rows}, {frame.shape[1]} columns", ""]
    shown = list(frame.columns)[:max_columns]
    width = max([len(str(name)) for name in shown] + [6])
    lines.append(f"{'column':<{width}}  {'type':<8}  {'missing':>7}  {'distinct':>8}  summary")
    for name in shown:
        column = frame[name]
        lines.append(f"{str(name):<{width}}  {_kind(column):<8}  {int(column.isna().sum()):>7}  "
                     f"{int(column.nunique(dropna=True)):>8}  {_summary(column)}")
    if frame.shape[1] > max_columns:
        lines.append(f"... and {frame.shape[1] - max_columns} more columns: "
                     + ", ".join(map(str, list(frame.columns)[max_columns:max_columns + 20])))
    return Observation("\n".join(lines))
