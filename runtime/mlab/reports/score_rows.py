"""The rows of a run's scores.jsonl as a report keeps them once the run's row is made."""
from __future__ import annotations

from collections.abc import Mapping

_SCORE_FIELDS = ("step", "score", "improvement", "success", "elapsed_s", "tokens", "cost")
_ABSENT = object()


class ScoreRow(Mapping):
    """A row of scores.jsonl as a report keeps it once the run's row is made: the numbers the
    curves read (_SCORE_FIELDS), read as a dict is, in a third of a dict's memory (a 50-step run
    keeps 51 of them, and a report over 5,000 runs holds them all)."""

    __slots__ = _SCORE_FIELDS

    def __init__(self, row: dict):
        for name in _SCORE_FIELDS:
            setattr(self, name, row.get(name, _ABSENT))

    def __getitem__(self, name: str):
        value = getattr(self, name, _ABSENT) if name in _SCORE_FIELDS else _ABSENT
        if value is _ABSENT:
            raise KeyError(name)
        return value

    def get(self, name: str, default=None):
        """As a dict's get, without Mapping.get's KeyError round trip (the curves call it for every row)."""
        value = getattr(self, name, _ABSENT) if name in _SCORE_FIELDS else _ABSENT
        return default if value is _ABSENT else value

    def __iter__(self):
        return (name for name in _SCORE_FIELDS if getattr(self, name) is not _ABSENT)

    def __len__(self) -> int:
        return sum(1 for _ in self)
