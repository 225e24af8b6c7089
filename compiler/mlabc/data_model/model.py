"""What a variant's tables hold: for each table (public and private) its columns, and for each
column its type, its blanks, its value set (up to VALUE_SET_LIMIT distinct values) or its range.

A model is plain data (JSON-able, so that the compiler keeps it in the user cache per content):
`DataModel.tables` maps "public/NAME" and "private/NAME" to a `TableProfile`. It is made from
tables in memory (`profile_tables`, the compiler's check) or from a prepared folder
(`read_prepared`, the runtime at preparation and at scoring); the checks (checks.py) read only it,
and the few row-level facts they need (the id values, how an id orders a label, which public
column recodes an answer) are worked out here, while the rows are at hand.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

VALUE_SET_LIMIT = 50      # distinct values kept as a column's value set; more: its range only
IDS_KEPT = 200_000        # ids kept per table (larger tables keep their count and first ones)
TABLE_SUFFIXES = (".csv", ".parquet")


@dataclass
class ColumnProfile:
    """One column: `type` is "number" (every non-blank value numeric), "bool", "text" or "empty";
    `blanks` counts empty cells; `values` the distinct non-blank values as text (None past
    VALUE_SET_LIMIT); `low`/`high` the range of a number column."""

    type: str
    blanks: int
    values: list[str] | None
    low: float | None = None
    high: float | None = None

    def to_json(self) -> dict:
        return {"type": self.type, "blanks": self.blanks, "values": self.values, "low": self.low, "high": self.high}


@dataclass
class TableProfile:
    rows: int
    columns: dict[str, ColumnProfile]
    ids: dict[str, list[str]] = field(default_factory=dict)  # id column → its values (as text), in row order

    def to_json(self) -> dict:
        return {"rows": self.rows, "columns": {n: c.to_json() for n, c in self.columns.items()}, "ids": self.ids}

    @classmethod
    def from_json(cls, data: dict) -> "TableProfile":
        return cls(data["rows"], {n: ColumnProfile(**c) for n, c in data["columns"].items()}, data["ids"])


@dataclass
class DataModel:
    """The tables of one prepared variant, and the facts that need rows (see the module docstring).

    recodings: "answers column" → public columns of the test table whose values map one to one
    onto it (aligned by id). id_order: answers column → True when sorting the test rows by id
    sorts them by that answer (a label in blocks, or a number rising or falling with the id).
    """

    tables: dict[str, TableProfile]
    recodings: dict[str, list[str]] = field(default_factory=dict)
    id_order: dict[str, bool] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)  # every prepared file, "public/NAME" or "private/NAME"

    def table(self, side: str, name: str) -> TableProfile | None:
        return self.tables.get(f"{side}/{name}")

    def to_json(self) -> dict:
        return {"tables": {n: t.to_json() for n, t in self.tables.items()}, "recodings": self.recodings,
                "id_order": self.id_order, "files": self.files}

    @classmethod
    def from_json(cls, data: dict) -> "DataModel":
        return cls({n: TableProfile.from_json(t) for n, t in data["tables"].items()}, data["recodings"],
                   data["id_order"], data["files"])


def _text(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _factorize(series):
    """(codes, distinct values) of a column, -1 for a missing cell; cells that cannot be hashed (a
    list) are compared by their text."""
    import pandas as pd

    try:
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
    except TypeError:
        codes, uniques = pd.factorize(series.map(lambda v: v if v is None or (isinstance(v, float) and v != v) else str(v)),
                                      use_na_sentinel=True)
    return codes, pd.Index(uniques)


def texts(series):
    """The column's cells as the checks compare them (`_text`, stripped; a blank cell "nan"), as
    a Series of str: each distinct value is written once (pandas' string methods, per cell, were
    most of a cold check's time)."""
    import numpy as np
    import pandas as pd

    codes, uniques = _factorize(series)
    written = np.array([_text(u).strip() for u in uniques] + ["nan"], dtype=object)
    return pd.Series(written[codes], index=series.index, dtype=object)


def profile_column(series) -> ColumnProfile:
    import numpy as np
    import pandas as pd

    if series.dtype.kind in "iuf":  # numbers: no cell to strip, the values written only when few
        present = series.dropna()
        if len(present):
            distinct_numbers = pd.unique(present.to_numpy())
            values = sorted({_text(u) for u in distinct_numbers}) if len(distinct_numbers) <= VALUE_SET_LIMIT else None
            return ColumnProfile("number", len(series) - len(present), values, float(present.min()), float(present.max()))
    codes, uniques = _factorize(series)  # each distinct value once
    written = [_text(u).strip() for u in uniques]
    empty = np.array([w == "" for w in written] + [True], dtype=bool)  # code -1: a missing cell
    blanks = int(empty[codes].sum())
    kept = ~empty[:-1]
    distinct = sorted({w for w, keep in zip(written, kept) if keep})
    values = distinct if len(distinct) <= VALUE_SET_LIMIT else None
    low = high = None
    if not kept.any():
        kind = "empty"  # no value to judge (a test table of no rows)
    elif pd.api.types.is_bool_dtype(series) or set(distinct) <= {"True", "False", "true", "false"}:
        kind = "bool"
    else:
        numbers = pd.to_numeric(pd.Series(uniques[kept]), errors="coerce")  # the column's own type kept
        kind = "number" if not numbers.isna().any() else "text"
        if kind == "number":
            low, high = float(numbers.min()), float(numbers.max())
    return ColumnProfile(kind, blanks, values, low, high)


def profile_table(frame, id_column: str | None) -> TableProfile:
    columns = {str(name): profile_column(frame[name]) for name in frame.columns}
    ids = {}
    if id_column and id_column in frame.columns:
        ids[id_column] = texts(frame[id_column]).tolist()[:IDS_KEPT]
    return TableProfile(len(frame), columns, ids)


def profile_tables(public: dict, private: dict, variant: dict, files: list[str] | None = None) -> DataModel:
    """The model of a variant's tables in memory (file name → DataFrame on each side)."""
    id_column = variant.get("id")
    tables = {f"{side}/{name}": profile_table(frame, id_column)
              for side, frames in (("public", public), ("private", private)) for name, frame in frames.items()}
    model = DataModel(tables, files=sorted(files if files is not None else tables))
    _row_facts(model, public, private, variant)
    return model


def _row_facts(model: DataModel, public: dict, private: dict, variant: dict) -> None:
    """recodings and id_order (see DataModel), from the test table and the answers."""
    id_column, answers = variant.get("id"), list(variant.get("answers") or [])
    names = list(variant.get("public") or [])
    private_names = list(variant.get("private") or [])
    if not id_column or not answers or not private_names or private_names[0] not in private:
        return
    truth = private[private_names[0]]
    if id_column not in truth.columns:
        return
    test = next((public[n] for n in names[1:2] + names[:1] if n in public and id_column in public[n].columns
                 and len(public[n]) == len(truth)), None)
    for answer in answers:
        if answer not in truth.columns:
            continue
        model.id_order[answer] = ordered_by_id(truth[id_column], truth[answer])
        if test is None:
            continue
        joined = truth[[id_column, answer]].merge(test, on=id_column, how="inner", suffixes=("", " (public)"))
        if len(joined) < max(10, len(truth) // 2):
            continue
        found = [str(c) for c in test.columns if c != id_column and one_to_one(joined[answer], joined[
            c if c != answer else f"{c} (public)"])]
        if found:
            model.recodings[answer] = found


def one_to_one(left, right) -> bool:
    """Does each value of `left` go with one value of `right`, and each of `right` with one of
    `left` (so one is a recoding of the other), over rows with several distinct values?"""
    import numpy as np
    import pandas as pd

    left, right = texts(left).to_numpy(), texts(right).to_numpy()
    left_codes, left_values = pd.factorize(left)
    right_codes, right_values = pd.factorize(right)
    if len(left_values) > 1 and (left == right).all():
        return True  # the very values
    if len(left_values) != len(right_values):
        return False
    distinct = len(np.unique(left_codes.astype(np.int64) * (len(right_values) + 1) + right_codes))
    return distinct > 1 and distinct == len(left_values) and distinct < len(left)


def ordered_by_id(ids, labels) -> bool:
    """Does the order of the ids give the label away? Labels of several values in one block
    each, or numbers in the ids' order (|Spearman| over 0.99: a trend alone does not), over 20 rows or more."""
    import pandas as pd

    if len(ids) < 20:
        return False
    numeric_ids = pd.to_numeric(ids, errors="coerce")
    key = numeric_ids if not numeric_ids.isna().any() else ids.astype(str)
    order = key.reset_index(drop=True).sort_values(kind="stable").index
    ranked = labels.reset_index(drop=True).iloc[order].astype(str).str.strip()
    distinct = ranked.nunique()
    if 1 < distinct <= VALUE_SET_LIMIT and distinct < len(ranked) / 4:
        runs = int((ranked != ranked.shift()).sum())
        return runs == distinct
    numbers = pd.to_numeric(labels, errors="coerce")
    if numbers.isna().any() or distinct < 3:
        return False
    correlation = pd.Series(key.rank().to_numpy()).corr(pd.Series(numbers.rank().to_numpy()))
    return bool(abs(correlation) > 0.99)


def read_table(path: Path):
    """A prepared table read as text cells (so ids keep their spelling) with blanks as NaN."""
    import pandas as pd

    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    return pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])


def read_prepared(public_dir: Path, private_dir: Path, variant: dict, only: set[str] | None = None) -> DataModel:
    """The model of a prepared variant's folders: every CSV or Parquet table on either side (only
    those named in `only`, as "public/NAME" or "private/NAME", when given)."""
    frames: dict[str, dict] = {"public": {}, "private": {}}
    files = []
    for side, folder in (("public", Path(public_dir)), ("private", Path(private_dir))):
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            rel = path.relative_to(folder).as_posix()
            files.append(f"{side}/{rel}")
            if path.suffix in TABLE_SUFFIXES and (only is None or f"{side}/{rel}" in only):
                try:
                    frames[side][rel] = read_table(path)
                except Exception:  # an unreadable table is profiled as none; the scorer says why
                    continue
    return profile_tables(frames["public"], frames["private"], variant, files)
