"""Split a table into train and test rows as a task's data variant declares, and write the parts.

Convention for tabular sources: public[0] gets the train rows (all columns), public[1] the
test rows without the answer columns, private[0] the id column and the answer columns of
the test rows. With `split none` the whole table is public[0].

A declared validation share (`validation 0.1`) is then held out of the train rows: their
features (the answer columns dropped) are the public VALIDATION_FILE, their id and answers the
private VALIDATION_FILE, and they are left out of public[0].
"""
from __future__ import annotations

from pathlib import Path

from mlab.errors import DataError

DEFAULT_TEST_FRACTION = 0.2
VALIDATION_FILE = "validation.csv"  # the same name on both sides: public features, private answers


def split_table(frame, split: dict, where: str):
    """(train, test) row sets of `frame` per the declared split; the order of rows is kept.

    random: `frame.sample(frac, random_state=seed)` are the test rows, in the order drawn.
    group:  whole groups of `column`, drawn the same way from the distinct values, go to test.
    stratified: each class of `column` gives round(fraction * its rows) to test, drawn as `random`
            draws (by class, in order of first appearance), so both sides keep the class shares; a
            class of one row stays in train. Rows without a class are refused.
    time:   the rows with the largest values of `column` go to test; with a `horizon` (seconds,
            `split time COLUMN last 30 days`), the rows dated within it before the latest date.
    ordered: the last `fraction` of the rows, in source order, go to test (as the published
            starters cut their tables); the rows are never reordered first.
    """
    method = split.get("method", "none")
    fraction = split.get("fraction")
    fraction = DEFAULT_TEST_FRACTION if fraction is None else float(fraction)
    seed = split.get("seed") or 0
    if method == "none":
        return frame, frame.iloc[0:0]
    if not 0 < fraction < 1:
        raise DataError(f"{where}: the test fraction must be between 0 and 1, not {fraction}")
    if method == "ordered":
        count = int(round(len(frame) * fraction))
        cut = len(frame) - count
        return frame.iloc[:cut], frame.iloc[cut:]
    if method == "random":
        test = frame.sample(frac=fraction, random_state=seed)
        return frame.drop(test.index), test
    column = split.get("column")
    if column not in frame.columns:
        raise DataError(f"{where}: split column {column!r} is not in the data; columns: "
                        + ", ".join(map(str, frame.columns[:30])))
    if method == "stratified":
        return _split_by_class(frame, column, fraction, seed, where)
    if method == "group":
        import pandas as pd

        groups = pd.Series(frame[column].drop_duplicates().to_numpy())
        chosen = groups.sample(frac=fraction, random_state=seed)
        in_test = frame[column].isin(set(chosen))
        return frame[~in_test], frame[in_test]
    if method == "time" and split.get("horizon"):
        return _split_by_horizon(frame, column, float(split["horizon"]), where)
    if method == "time":
        count = int(round(len(frame) * fraction))
        order = frame[column].sort_values(kind="stable").index
        in_test = frame.index.isin(order[len(order) - count:]) if count else frame.index.isin([])
        return frame[~in_test], frame[in_test]
    raise DataError(f"{where}: unknown split method {method!r}")


def _split_by_class(frame, column: str, fraction: float, seed: int, where: str):
    """`split stratified COLUMN FRACTION`: each class's share of test rows drawn on its own."""
    if frame[column].isna().any():
        raise DataError(f"{where}: `split stratified {column!r}` needs a class in every row; "
                        f"{int(frame[column].isna().sum())} row(s) have none")
    chosen = []
    for _, rows in frame.groupby(column, sort=False):
        count = int(round(len(rows) * fraction))
        if len(rows) > 1 and count:
            chosen.append(rows.sample(n=min(count, len(rows) - 1), random_state=seed).index)
    in_test = frame.index.isin([i for part in chosen for i in part])
    if not in_test.any():
        raise DataError(f"{where}: a stratified test share of {fraction:g} draws no row from the classes of "
                        f"{column!r}; declare a larger share")
    return frame[~in_test], frame[in_test]


def _split_by_horizon(frame, column: str, horizon: float, where: str):
    """`split time COLUMN last 30 days`: the rows dated within `horizon` seconds before the latest
    date of the column are the test rows; the earlier ones the training rows."""
    import pandas as pd

    try:
        dates = pd.to_datetime(frame[column], errors="raise")
    except (ValueError, TypeError) as problem:
        raise DataError(f"{where}: `split time {column!r} last ...` needs dates in column {column!r}: "
                        f"{str(problem).splitlines()[0]}") from None
    if dates.isna().any():
        raise DataError(f"{where}: column {column!r} has {int(dates.isna().sum())} row(s) without a date")
    cutoff = dates.max() - pd.Timedelta(seconds=horizon)
    in_test = (dates > cutoff).to_numpy()
    if in_test.all() or not in_test.any():
        span = f"{dates.min().date()} to {dates.max().date()}"
        raise DataError(f"{where}: the last {horizon / 86400:g} days of {column!r} ({span}) hold "
                        f"{int(in_test.sum())} of {len(frame)} rows; choose a horizon that leaves rows on both sides")
    return frame[~in_test], frame[in_test]


def hold_out_validation(train, share: float, seed: int, where: str):
    """(train, validation): `share` of the train rows drawn by `seed` (the split's), in the order
    drawn; the rest keep their order."""
    if not 0 < share < 1:
        raise DataError(f"{where}: the validation fraction must be between 0 and 1, not {share}")
    held = train.sample(frac=share, random_state=seed)
    if held.empty or len(held) == len(train):
        raise DataError(f"{where}: a validation share of {share:g} of {len(train)} training rows "
                        f"holds out {len(held)} rows; declare a share that leaves rows on both sides")
    return train.drop(held.index), held


def write_table(frame, path: Path) -> None:
    """Write a table as CSV, or Parquet when the file name says so."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".parquet":
        try:
            frame.to_parquet(path, index=False)
        except ImportError as error:
            raise DataError(f"writing {path.name} needs a Parquet engine ({error}); "
                            "install pyarrow") from None
    else:
        frame.to_csv(path, index=False)


def write_split(frame, variant: dict, public_dir: Path, private_dir: Path, where: str) -> None:
    """Split `frame` and write public and private files by the tabular convention."""
    answers = list(variant.get("answers") or [])
    id_column = variant.get("id")
    missing = [c for c in answers if c not in frame.columns]
    if missing:
        raise DataError(f"{where}: answer column(s) {', '.join(missing)} are not in the data; "
                        "columns: " + ", ".join(map(str, frame.columns[:30])))
    if id_column and id_column not in frame.columns:
        raise DataError(f"{where}: id column {id_column!r} is not in the data; columns: "
                        + ", ".join(map(str, frame.columns[:30])))
    public, private = list(variant["public"]), list(variant.get("private") or [])
    train, test = split_table(frame, variant["split"], where)
    if variant["split"].get("method", "none") == "none":
        if len(public) != 1 or private:
            raise DataError(f"{where}: `split none` gives one table, so declare exactly one public "
                            f"file and no private files (found public {public}, private {private})")
        write_table(train, public_dir / public[0])
        return
    if len(public) != 2 or len(private) != 1:
        raise DataError(f"{where}: a split table is written as two public files (train, test) and one "
                        f"private file (answers); found public {public}, private {private}")
    kept = ([id_column] if id_column else []) + answers
    share = variant.get("validation")
    if share is not None:
        if not id_column:
            raise DataError(f"{where}: a validation split needs an id column to name its rows")
        train, held = hold_out_validation(train, float(share), variant["split"].get("seed") or 0, where)
        write_table(held.drop(columns=answers), public_dir / VALIDATION_FILE)
        write_table(held[kept], private_dir / VALIDATION_FILE)
    write_table(train, public_dir / public[0])
    write_table(test.drop(columns=answers), public_dir / public[1])
    write_table(test[kept], private_dir / private[0])
