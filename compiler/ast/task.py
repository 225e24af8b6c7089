"""The entries of a task block and its data block (title, problem, metric, limits, data, ...)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..diagnostics import Span
from .base import Entry, Ident, Param, Value

__all__ = [
    'Title', 'Category', 'Problem', 'Starter', 'ReadOnly', 'Requires', 'ColumnRule', 'Submission', 'Metric',
    'BaselineRun', 'BaselineValue', 'Reference', 'Thresholds', 'Leaderboard', 'Gym', 'Success', 'DefaultAgent', 'Demo',
    'Evaluator', 'Version', 'Change', 'Changes', 'KnownIssue', 'Limit', 'Limits', 'HardwareEntry',
    'Hardware', 'Source', 'Split', 'Validation', 'IdColumn', 'Answers', 'Public', 'Private',
    'Checksum', 'Prepare', 'Data',
]


@dataclass(frozen=True)
class Title(Entry):
    value: Value
    keyword: ClassVar[str] = "title"


@dataclass(frozen=True)
class Category(Entry):
    value: Value
    keyword: ClassVar[str] = "category"


@dataclass(frozen=True)
class Problem(Entry):
    value: Value
    keyword: ClassVar[str] = "problem"


@dataclass(frozen=True)
class Starter(Entry):
    value: Value
    keyword: ClassVar[str] = "starter"


@dataclass(frozen=True)
class ReadOnly(Entry):
    value: Value
    keyword: ClassVar[str] = "read_only"


@dataclass(frozen=True)
class Requires(Entry):
    value: Value
    keyword: ClassVar[str] = "requires"


@dataclass(frozen=True)
class ColumnRule(Entry):
    """`column "categories" ranking max 20 from "category_key.csv:id"`: a constraint on the values
    of one submission column. kind_ is the constraint's kind (ranking, label, integer, number,
    probability); count/count_value the `max 20` or `exactly 5` of a ranking; low/high the values
    after `from` and `to` (a range's bounds, or a vocabulary after `from`)."""

    column: Value
    kind_: Ident
    count: Ident | None = None
    count_value: Value | None = None
    low: Value | None = None
    high: Value | None = None
    keyword: ClassVar[str] = "column"


@dataclass(frozen=True)
class Submission(Entry):
    file: Value
    columns: Value
    rules: tuple[ColumnRule, ...] = ()  # the `{ column ... }` block after the columns
    keyword: ClassVar[str] = "submission"


@dataclass(frozen=True)
class Metric(Entry):
    name: Ident
    on: Value | None
    direction: Ident | None
    params: tuple[Param, ...] = ()
    keyword: ClassVar[str] = "metric"


@dataclass(frozen=True)
class BaselineRun(Entry):
    script: Value
    keyword: ClassVar[str] = "baseline"


@dataclass(frozen=True)
class BaselineValue(Entry):
    value: Value
    reason: Value
    keyword: ClassVar[str] = "baseline"


@dataclass(frozen=True)
class Reference(Entry):
    """`reference "expert" 0.912 source "..."`: a published or measured score of the task."""
    label: Value
    value: Value
    source: Value | None
    keyword: ClassVar[str] = "reference"
    repeatable: ClassVar[bool] = True


@dataclass(frozen=True)
class Thresholds(Entry):
    """`thresholds { gold X silver Y bronze Z source "..." }`: medal thresholds (MLE-bench)."""
    items: tuple["Limit", ...]
    keyword: ClassVar[str] = "thresholds"


@dataclass(frozen=True)
class Leaderboard(Entry):
    """`leaderboard "leaderboard.csv" column "score" source "..."`: a CSV of a public leaderboard's
    scores shipped with the task; medals and percentiles come from it (MLE-bench's rule)."""
    file: Value
    column: Value | None
    source: Value | None
    keyword: ClassVar[str] = "leaderboard"


@dataclass(frozen=True)
class Gym(Entry):
    """`gym { shaping validation weight 0.1 }`: how mlab.gym shapes an episode's reward."""
    items: tuple["Limit", ...]
    keyword: ClassVar[str] = "gym"


@dataclass(frozen=True)
class Success(Entry):
    threshold: Value
    keyword: ClassVar[str] = "success"


@dataclass(frozen=True)
class DefaultAgent(Entry):
    name: Ident
    keyword: ClassVar[str] = "agent"


@dataclass(frozen=True)
class Demo(Entry):
    value: Value
    keyword: ClassVar[str] = "demo"


@dataclass(frozen=True)
class Evaluator(Entry):
    target: Value
    reason: Value
    keyword: ClassVar[str] = "evaluator"


@dataclass(frozen=True)
class Version(Entry):
    value: Value
    keyword: ClassVar[str] = "version"


@dataclass(frozen=True)
class Change:
    """One entry of `changes { 2 "what changed" because "why" }`."""
    version: Value
    what: Value
    why: Value
    span: Span


@dataclass(frozen=True)
class Changes(Entry):
    items: tuple[Change, ...]
    keyword: ClassVar[str] = "changes"


@dataclass(frozen=True)
class KnownIssue(Entry):
    """`issue "text" since 1 fixed 2`: a declared known issue of the task (`fixed` None while open)."""
    text: Value
    since: Value
    fixed: Value | None
    keyword: ClassVar[str] = "issue"
    repeatable: ClassVar[bool] = True


@dataclass(frozen=True)
class Limit:
    key: Ident
    value: Value
    span: Span


@dataclass(frozen=True)
class Limits(Entry):
    items: tuple[Limit, ...]
    keyword: ClassVar[str] = "limits"


@dataclass(frozen=True)
class HardwareEntry:
    key: Ident
    value: Value
    need: Ident | None
    span: Span


@dataclass(frozen=True)
class Hardware(Entry):
    items: tuple[HardwareEntry, ...]
    keyword: ClassVar[str] = "hardware"


@dataclass(frozen=True)
class Source(Entry):
    kind_: Ident
    value: Value
    keyword: ClassVar[str] = "from"


@dataclass(frozen=True)
class Split(Entry):
    method: Ident
    args: tuple[Value, ...]
    seed: Value | None
    keyword: ClassVar[str] = "split"


@dataclass(frozen=True)
class Validation(Entry):
    """`validation 0.1`: the share of the training rows the harness holds out for validation."""
    value: Value
    keyword: ClassVar[str] = "validation"


@dataclass(frozen=True)
class IdColumn(Entry):
    value: Value
    keyword: ClassVar[str] = "id"


@dataclass(frozen=True)
class Answers(Entry):
    value: Value
    keyword: ClassVar[str] = "answers"


@dataclass(frozen=True)
class Public(Entry):
    value: Value
    keyword: ClassVar[str] = "public"


@dataclass(frozen=True)
class Private(Entry):
    value: Value
    keyword: ClassVar[str] = "private"


@dataclass(frozen=True)
class Checksum(Entry):
    file: Value
    digest: Value
    keyword: ClassVar[str] = "checksum"
    repeatable: ClassVar[bool] = True


@dataclass(frozen=True)
class Prepare(Entry):
    value: Value
    keyword: ClassVar[str] = "prepare"


@dataclass(frozen=True)
class Data(Entry):
    name: Ident
    entries: tuple[Entry, ...]
    keyword: ClassVar[str] = "data"
    repeatable: ClassVar[bool] = True
