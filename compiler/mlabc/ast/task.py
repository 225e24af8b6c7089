"""The entries of a task block and its data block (title, problem, metric, limits, data, ...)."""
from __future__ import annotations

from typing import ClassVar

from ..diagnostics import Span
from .base import Entry, Ident, Param, Value, node

__all__ = [
    'Title', 'Category', 'Problem', 'Starter', 'ReadOnly', 'Requires', 'ColumnRule', 'Submission', 'Metric',
    'BaselineRun', 'BaselineValue', 'Reference', 'Thresholds', 'Leaderboard', 'Gym', 'Success', 'DefaultAgent', 'Demo',
    'Evaluator', 'Version', 'Change', 'Changes', 'KnownIssue', 'Limit', 'Limits', 'HardwareEntry',
    'Hardware', 'Source', 'Split', 'Validation', 'IdColumn', 'Answers', 'Public', 'Private',
    'Checksum', 'Prepare', 'Data',
]


@node
class Title(Entry):
    value: Value
    keyword: ClassVar[str] = "title"


@node
class Category(Entry):
    value: Value
    keyword: ClassVar[str] = "category"


@node
class Problem(Entry):
    value: Value
    keyword: ClassVar[str] = "problem"


@node
class Starter(Entry):
    value: Value
    keyword: ClassVar[str] = "starter"


@node
class ReadOnly(Entry):
    value: Value
    keyword: ClassVar[str] = "read_only"


@node
class Requires(Entry):
    value: Value
    keyword: ClassVar[str] = "requires"


@node
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


@node
class Submission(Entry):
    file: Value
    columns: Value
    rules: tuple[ColumnRule, ...] = ()  # the `{ column ... }` block after the columns
    keyword: ClassVar[str] = "submission"


@node
class Metric(Entry):
    name: Ident
    on: Value | None
    direction: Ident | None
    params: tuple[Param, ...] = ()
    keyword: ClassVar[str] = "metric"


@node
class BaselineRun(Entry):
    script: Value
    keyword: ClassVar[str] = "baseline"


@node
class BaselineValue(Entry):
    value: Value
    reason: Value
    keyword: ClassVar[str] = "baseline"


@node
class Reference(Entry):
    """`reference "expert" 0.912 source "..."`: a published or measured score of the task."""
    label: Value
    value: Value
    source: Value | None
    keyword: ClassVar[str] = "reference"
    repeatable: ClassVar[bool] = True


@node
class Thresholds(Entry):
    """`thresholds { gold X silver Y bronze Z source "..." }`: medal thresholds (MLE-bench)."""
    items: tuple["Limit", ...]
    keyword: ClassVar[str] = "thresholds"


@node
class Leaderboard(Entry):
    """`leaderboard "leaderboard.csv" column "score" source "..."`: a CSV of a public leaderboard's
    scores shipped with the task; medals and percentiles come from it (MLE-bench's rule)."""
    file: Value
    column: Value | None
    source: Value | None
    keyword: ClassVar[str] = "leaderboard"


@node
class Gym(Entry):
    """`gym { shaping validation weight 0.1 }`: how mlab.gym shapes an episode's reward."""
    items: tuple["Limit", ...]
    keyword: ClassVar[str] = "gym"


@node
class Success(Entry):
    threshold: Value
    keyword: ClassVar[str] = "success"


@node
class DefaultAgent(Entry):
    name: Ident
    keyword: ClassVar[str] = "agent"


@node
class Demo(Entry):
    value: Value
    keyword: ClassVar[str] = "demo"


@node
class Evaluator(Entry):
    target: Value
    reason: Value
    keyword: ClassVar[str] = "evaluator"


@node
class Version(Entry):
    value: Value
    keyword: ClassVar[str] = "version"


@node
class Change:
    """One entry of `changes { 2 "what changed" because "why" }`."""
    version: Value
    what: Value
    why: Value
    span: Span


@node
class Changes(Entry):
    items: tuple[Change, ...]
    keyword: ClassVar[str] = "changes"


@node
class KnownIssue(Entry):
    """`issue "text" since 1 fixed 2`: a declared known issue of the task (`fixed` None while open)."""
    text: Value
    since: Value
    fixed: Value | None
    keyword: ClassVar[str] = "issue"
    repeatable: ClassVar[bool] = True


@node
class Limit:
    key: Ident
    value: Value
    span: Span


@node
class Limits(Entry):
    items: tuple[Limit, ...]
    keyword: ClassVar[str] = "limits"


@node
class HardwareEntry:
    key: Ident
    value: Value
    need: Ident | None
    span: Span


@node
class Hardware(Entry):
    items: tuple[HardwareEntry, ...]
    keyword: ClassVar[str] = "hardware"


@node
class Source(Entry):
    kind_: Ident
    value: Value
    keyword: ClassVar[str] = "from"


@node
class Split(Entry):
    method: Ident
    args: tuple[Value, ...]
    seed: Value | None
    keyword: ClassVar[str] = "split"


@node
class Validation(Entry):
    """`validation 0.1`: the share of the training rows the harness holds out for validation."""
    value: Value
    keyword: ClassVar[str] = "validation"


@node
class IdColumn(Entry):
    value: Value
    keyword: ClassVar[str] = "id"


@node
class Answers(Entry):
    """`answers ["label"]`, with `unlabelled` when training rows may leave the answers blank."""
    value: Value
    unlabelled: Ident | None = None
    keyword: ClassVar[str] = "answers"


@node
class Public(Entry):
    value: Value
    keyword: ClassVar[str] = "public"


@node
class Private(Entry):
    value: Value
    keyword: ClassVar[str] = "private"


@node
class Checksum(Entry):
    file: Value
    digest: Value
    keyword: ClassVar[str] = "checksum"
    repeatable: ClassVar[bool] = True


@node
class Prepare(Entry):
    value: Value
    keyword: ClassVar[str] = "prepare"


@node
class Data(Entry):
    name: Ident
    entries: tuple[Entry, ...]
    keyword: ClassVar[str] = "data"
    repeatable: ClassVar[bool] = True
