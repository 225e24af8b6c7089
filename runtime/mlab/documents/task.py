"""The view of a compiled task (task.yaml, spec/task.schema.json) and of its parts."""
from __future__ import annotations

from collections.abc import Mapping

from mlab.documents.view import EMPTY, View


class Limits(View):
    """Limits as declared (a task's, a variant's, an experiment's): None leaves the level below."""

    steps: int | None = None
    time: float | None = None
    script_timeout: float | None = None
    memory: int | None = None
    disk: int | None = None
    tokens: int | None = None
    cost: float | None = None
    calls: int | None = None


class Source(View):
    """Where a variant's data comes from: `from KIND "value"`, with a generator's file and function."""

    kind: str
    value: str
    file: str | None = None
    function: str | None = None


class Split(View):
    method: str
    fraction: float | None = None
    seed: int | None = None
    column: str | None = None
    horizon: float | None = None


class Hook(View):
    """A Python function a task declares: the file beside the task and the function's name."""

    file: str
    function: str


class Variant(View):
    """One data variant of a task (lite, full, ...)."""

    source: Source
    split: Split
    id: str | None = None
    answers: tuple[str, ...] = ()
    public: tuple[str, ...] = ()
    private: tuple[str, ...] = ()
    checksums: Mapping[str, str] = EMPTY
    validation: float | None = None
    unlabelled: bool = False   # training rows may leave the answers blank (a semi-supervised task)
    prepare: Hook | None = None
    limits: Limits = Limits()


class Constraint(View):
    """A submission column's constraint (docs/language.md#column-constraints)."""

    column: str
    kind: str
    at_most: int | None = None
    exactly: int | None = None
    min: float | None = None
    max: float | None = None
    vocabulary: tuple[str, ...] | None = None
    vocabulary_file: str | None = None
    vocabulary_column: str | None = None


class Submission(View):
    """The file a task's submission is, and the columns a tabular one has."""

    file: str
    columns: tuple[str, ...] = ()
    constraints: tuple[Constraint, ...] = ()


class Metric(View):
    """A task's metric: its name, kind (tabular, timed, evaluator), scored columns and direction."""

    name: str
    columns: tuple[str, ...]
    direction: str
    kind: str
    params: Mapping[str, object] = EMPTY  # the declared `metric NAME(name = value)` parameters

    @property
    def timed(self) -> bool:
        return self.kind == "timed"


class Baseline(View):
    """The starter's score: run `script`, or a declared `value` with its `reason`."""

    kind: str
    script: str | None = None
    value: float | None = None
    reason: str | None = None


class Success(View):
    improvement: float


class Hardware(View):
    cpus: int = 1
    gpus: int = 0
    gpus_required: bool = False
    memory: int | None = None


class Change(View):
    version: int
    what: str
    why: str


class Issue(View):
    """A known issue of the task: since which version, fixed in which."""

    text: str
    since: int
    fixed: int | None = None


class Evaluator(View):
    file: str
    function: str
    reason: str


class Gym(View):
    shaping: str
    weight: float


class Point(View):
    label: str
    source: str | None
    value: float | None = None


class Thresholds(View):
    source: str | None
    gold: float | None = None
    silver: float | None = None
    bronze: float | None = None
    median: float | None = None


class Leaderboard(View):
    file: str
    column: str
    source: str | None
    scores: tuple[float, ...]


class References(View):
    points: tuple[Point, ...] = ()
    thresholds: Thresholds | None = None
    leaderboard: Leaderboard | None = None


class Task(View):
    """A compiled task (task.yaml)."""

    schema: str
    schema_version: int
    name: str
    metric: Metric
    success: Success
    baseline: Baseline
    data: Mapping[str, Variant] = EMPTY
    title: str = ""
    category: str = ""
    problem: str = ""
    starter: str | None = None
    read_only: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    root: str = ""
    submission: Submission | None = None
    agent: str = "research"  # the task's default agent
    limits: Limits = Limits()
    hardware: Hardware = Hardware()
    demo: str | None = None
    version: int = 1
    changes: tuple[Change, ...] = ()
    issues: tuple[Issue, ...] = ()
    evaluator: Evaluator | None = None
    gym: Gym | None = None
    references: References | None = None

    @property
    def cpus(self) -> int:
        return self.hardware.cpus or 1

