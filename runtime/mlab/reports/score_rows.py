"""The rows of a run's scores.jsonl as a report keeps them once the run's row is made."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

SCORE_FIELDS = ("step", "score", "improvement", "success", "elapsed_s", "tokens", "cost")
_COLUMN = {name: index for index, name in enumerate(SCORE_FIELDS)}
_ABSENT = object()


class ScoreTable(Sequence):
    """The rows of scores.jsonl as a report keeps them once the run's row is made: the numbers the
    curves read (SCORE_FIELDS), a tuple per field. A report over 5,000 runs holds 51 rows of each;
    a column is what the anytime curves read, so they take it whole (`column`) rather than asking
    every row for every field, and a row is still read as a dict is (`ScoreRow`)."""

    __slots__ = ("_columns",)

    def __init__(self, rows: list[dict]):
        self._columns = tuple(tuple([row.get(name, _ABSENT) for row in rows]) for name in SCORE_FIELDS)

    def __len__(self) -> int:
        return len(self._columns[0])

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[number] for number in range(len(self))[index]]
        return ScoreRow(self._columns, range(len(self))[index])   # IndexError past the end, as a list's

    def column(self, name: str) -> list:
        """The field of every row, None where a row has none."""
        return [None if value is _ABSENT else value for value in self._columns[_COLUMN[name]]]


class ScoreRow(Mapping):
    """A row of a ScoreTable, read as a dict is: a KeyError for a field the row did not hold."""

    __slots__ = ("_columns", "_index")

    def __init__(self, columns: tuple, index: int):
        self._columns, self._index = columns, index

    def __getitem__(self, name: str):
        value = self._columns[_COLUMN[name]][self._index] if name in _COLUMN else _ABSENT
        if value is _ABSENT:
            raise KeyError(name)
        return value

    def get(self, name: str, default=None):
        """As a dict's get, without Mapping.get's KeyError round trip."""
        value = self._columns[_COLUMN[name]][self._index] if name in _COLUMN else _ABSENT
        return default if value is _ABSENT else value

    def __iter__(self):
        return (name for name, column in zip(SCORE_FIELDS, self._columns) if column[self._index] is not _ABSENT)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def score_columns(rows) -> dict[str, list]:
    """The fields the curves read, a list per field (None where a row has none), of a run's rows
    as read from scores.jsonl or as kept (ScoreTable)."""
    if isinstance(rows, ScoreTable):
        return {name: rows.column(name) for name in SCORE_FIELDS}
    return {name: [row.get(name) for row in rows] for name in SCORE_FIELDS}
