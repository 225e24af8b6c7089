"""A data variant's tables made in memory: the one preparation logic the runtime and the compiler share.

The runtime (mlab.data) writes these tables into the prepared folder; the compiler's data model
(mlabc.data_model.model) profiles them without writing anything. Either way the split, the ids
mlab numbers and the validation hold-out are decided here, once.

Convention for tabular sources: public[0] gets the train rows (all columns), public[1] the
test rows without the answer columns, private[0] the id column and the answer columns of
the test rows. With `split none` the whole table is public[0].

A declared validation share (`validation 0.1`) is then held out of the train rows: their
features (the answer columns dropped) are the public VALIDATION_FILE, their id and answers the
private VALIDATION_FILE, and they are left out of public[0].

Problems raise PrepareError (a ValueError), which the runtime turns into its DataError.
"""
from __future__ import annotations

DEFAULT_TEST_FRACTION = 0.2
VALIDATION_FILE = "validation.csv"  # the same name on both sides: public features, private answers


class PrepareError(ValueError):
    """The variant's data cannot be made as declared: the task's fault, never an agent's."""


def generate_seed(variant: dict) -> int:
    """The seed a generator gets: the declared split seed, else 0 (data never depends on the run)."""
    declared = variant["split"].get("seed")
    return int(declared) if declared is not None else 0


def add_id_column(frame, variant: dict):
    """The declared id column, numbered by mlab when the source has none.

    The rows are shuffled (deterministically, by the split seed) before they are numbered: a
    source's own row order often carries the answer (scikit-learn's sets are sorted by class),
    and ids in that order would let a model score on the id alone.

    `split ordered` cuts the table by its source order, so there the rows keep that order and
    the ids are a shuffled numbering instead: the split is as declared and an id still says
    nothing about a row's place.
    """
    id_column = variant.get("id")
    if id_column and id_column not in frame.columns:
        if variant["split"].get("method") == "ordered":
            import numpy as np

            ids = np.random.RandomState(generate_seed(variant)).permutation(len(frame))
            frame = frame.reset_index(drop=True)
            frame.insert(0, id_column, ids)
        else:
            frame = frame.sample(frac=1, random_state=generate_seed(variant)).reset_index(drop=True)
            frame.insert(0, id_column, range(len(frame)))
    return frame


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
        raise PrepareError(f"{where}: the test fraction must be between 0 and 1, not {fraction}")
    if method == "ordered":
        count = int(round(len(frame) * fraction))
        cut = len(frame) - count
        return frame.iloc[:cut], frame.iloc[cut:]
    if method == "random":
        test = frame.sample(frac=fraction, random_state=seed)
        return frame.drop(test.index), test
    column = split.get("column")
    if column not in frame.columns:
        raise PrepareError(f"{where}: split column {column!r} is not in the data; columns: "
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
    raise PrepareError(f"{where}: unknown split method {method!r}")


def _split_by_class(frame, column: str, fraction: float, seed: int, where: str):
    """`split stratified COLUMN FRACTION`: each class's share of test rows drawn on its own."""
    if frame[column].isna().any():
        raise PrepareError(f"{where}: `split stratified {column!r}` needs a class in every row; "
                           f"{int(frame[column].isna().sum())} row(s) have none")
    chosen = []
    for _, rows in frame.groupby(column, sort=False):
        count = int(round(len(rows) * fraction))
        if len(rows) > 1 and count:
            chosen.append(rows.sample(n=min(count, len(rows) - 1), random_state=seed).index)
    in_test = frame.index.isin([i for part in chosen for i in part])
    if not in_test.any():
        raise PrepareError(f"{where}: a stratified test share of {fraction:g} draws no row from the classes of "
                           f"{column!r}; declare a larger share")
    return frame[~in_test], frame[in_test]


def _split_by_horizon(frame, column: str, horizon: float, where: str):
    """`split time COLUMN last 30 days`: the rows dated within `horizon` seconds before the latest
    date of the column are the test rows; the earlier ones the training rows."""
    import pandas as pd

    try:
        dates = pd.to_datetime(frame[column], errors="raise")
    except (ValueError, TypeError) as problem:
        raise PrepareError(f"{where}: `split time {column!r} last ...` needs dates in column {column!r}: "
                           f"{str(problem).splitlines()[0]}") from None
    if dates.isna().any():
        raise PrepareError(f"{where}: column {column!r} has {int(dates.isna().sum())} row(s) without a date")
    cutoff = dates.max() - pd.Timedelta(seconds=horizon)
    in_test = (dates > cutoff).to_numpy()
    if in_test.all() or not in_test.any():
        span = f"{dates.min().date()} to {dates.max().date()}"
        raise PrepareError(f"{where}: the last {horizon / 86400:g} days of {column!r} ({span}) hold "
                           f"{int(in_test.sum())} of {len(frame)} rows; choose a horizon that leaves rows on both sides")
    return frame[~in_test], frame[in_test]


def hold_out_validation(train, share: float, seed: int, where: str):
    """(train, validation): `share` of the train rows drawn by `seed` (the split's), in the order
    drawn; the rest keep their order."""
    if not 0 < share < 1:
        raise PrepareError(f"{where}: the validation fraction must be between 0 and 1, not {share}")
    held = train.sample(frac=share, random_state=seed)
    if held.empty or len(held) == len(train):
        raise PrepareError(f"{where}: a validation share of {share:g} of {len(train)} training rows "
                           f"holds out {len(held)} rows; declare a share that leaves rows on both sides")
    return train.drop(held.index), held


def split_frames(frame, variant: dict, where: str) -> tuple[dict, dict]:
    """(public, private): file name → table, `frame` split by the tabular convention (see above)."""
    answers = list(variant.get("answers") or [])
    id_column = variant.get("id")
    missing = [c for c in answers if c not in frame.columns]
    if missing:
        raise PrepareError(f"{where}: answer column(s) {', '.join(missing)} are not in the data; "
                           "columns: " + ", ".join(map(str, frame.columns[:30])))
    if id_column and id_column not in frame.columns:
        raise PrepareError(f"{where}: id column {id_column!r} is not in the data; columns: "
                           + ", ".join(map(str, frame.columns[:30])))
    public, private = list(variant["public"]), list(variant.get("private") or [])
    train, test = split_table(frame, variant["split"], where)
    if variant["split"].get("method", "none") == "none":
        if len(public) != 1 or private:
            raise PrepareError(f"{where}: `split none` gives one table, so declare exactly one public "
                               f"file and no private files (found public {public}, private {private})")
        return {public[0]: train}, {}
    if len(public) != 2 or len(private) != 1:
        raise PrepareError(f"{where}: a split table is written as two public files (train, test) and one "
                           f"private file (answers); found public {public}, private {private}")
    kept = ([id_column] if id_column else []) + answers
    share = variant.get("validation")
    public_tables, private_tables = {}, {}
    if share is not None:
        if not id_column:
            raise PrepareError(f"{where}: a validation split needs an id column to name its rows")
        train, held = hold_out_validation(train, float(share), variant["split"].get("seed") or 0, where)
        public_tables[VALIDATION_FILE] = held.drop(columns=answers)
        private_tables[VALIDATION_FILE] = held[kept]
    public_tables[public[0]] = train
    public_tables[public[1]] = test.drop(columns=answers)
    private_tables[private[0]] = test[kept]
    return public_tables, private_tables
