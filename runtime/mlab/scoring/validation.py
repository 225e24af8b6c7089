"""The `validate_submission` primitive: check the agent's submission file against the task's
format without scoring it (in the manner of MLE-bench's validation server and MLGym's validate).

The check is the scorer's own (`submission.check_submission`: columns, ids, row count, value
kinds, the task's column constraints), run against the ids of the public test file instead of the answers, so that what the
agent learns is what test.csv already tells it: nothing of the answers in the run's private/
folder is read (only the task's copies of its vocabulary files, which the workspace holds too).
The test ids come from the run's initial snapshot, the harness's copy of the public files as
installed, so an edited or removed test.csv in the workspace changes nothing.

The primitive needs the run's task and snapshot, which the action layer does not know, and the
metrics' value kinds, which live in scoring; so `actions.primitives` registers a placeholder and
whoever drives a run (the agent loop, `mlab drive`) installs this implementation into the run's
table with `install(run)`.

A task whose data variant declares a validation split (`validation 0.1`: training rows the
harness held out, their features public as validation.csv) gets a score as well: when the agent
has written VALIDATION_SUBMISSION (the submission's columns, one row per validation.csv row),
it is checked against the validation ids and scored with the task's metric against the private
validation answers. Only those answers are read; the test answers never are.
"""
from __future__ import annotations

import io
import shutil
import tempfile
from pathlib import Path
from types import SimpleNamespace

from mlab.confined import Refused
from mlab.errors import MlabError
from mlab.observation import Observation, error
from mlab.data.splits import VALIDATION_FILE

DEFAULT_FILE = "submission.csv"
VALIDATION_SUBMISSION = "validation_submission.csv"  # the agent's predictions for validation.csv


def install(run) -> None:
    """Put the implementation of `validate_submission` into the run's action table."""
    registry = run.table.primitives
    if "validate_submission" in registry:
        registry.implement("validate_submission", SubmissionValidator(run))


class SubmissionValidator:
    """validate_submission for one run: the check runs in a child interpreter (mlab.scoring.child),
    which reads the tables with pandas, so that the process driving the agent never imports it."""

    def __init__(self, run, charged: bool = False) -> None:
        # what the check reads of the run: all of it can be sent to the child process
        self.parts = SimpleNamespace(task=run.task, meta=run.meta, private_dir=Path(run.private_dir),
                                     store=run.store)
        # charged: the child is held to the run's memory limit and time left (an outside agent's
        # call, which is no step of the run's own loop)
        self._limits = (lambda: {"memory_bytes": run.scripts.memory_bytes, "timeout_s": run.remaining_time()}) \
            if charged else dict

    def __call__(self, ctx, inputs: dict, params: dict) -> Observation:
        from mlab.scoring.child import call

        return call("mlab.scoring.validation:validate_in_child", self.parts, Path(ctx.workspace.root), inputs, params,
                    **self._limits())


def validate_in_child(parts, workspace: Path, inputs: dict, params: dict) -> Observation:
    """What Validate Submission answers for the workspace (run in the child process)."""
    return SubmissionCheck(parts)(SimpleNamespace(workspace=SimpleNamespace(root=workspace)), inputs, params)


class SubmissionCheck:
    """The format check against the public test ids, and the validation split's score."""

    def __init__(self, run) -> None:
        self.run = run
        self._ids: list | None = None
        self.measured: float | None = None   # the validation score of the last check, as the harness measured it

    def __call__(self, ctx, inputs: dict, params: dict) -> Observation:
        """The check's observation, with the validation score it measured in its details
        ("validation_score"): what the Gym's shaping reads, never the observation's text."""
        self.measured = None
        observation = self.check(ctx, inputs, params)
        if self.measured is not None:
            observation.details["validation_score"] = self.measured
        return observation

    def check(self, ctx, inputs: dict, params: dict) -> Observation:
        from mlab.scoring.constraints import VocabularyError
        from mlab.scoring.score import copy_submission
        from mlab.scoring.submission import MAX_SUBMISSION_BYTES, SubmissionError, check_submission

        task = self.run.task
        metric, submission = task.view.metric, task.view.submission
        if metric.kind != "tabular":
            return error(f"this task's metric ({metric.name}) is not scored from a submission table, "
                         "so there is no submission format to check")
        rel = submission.file if submission and submission.file else DEFAULT_FILE
        variant = self.run.task.variant(self.run.meta["data"]["variant"])
        id_column = variant.id
        declared = list(submission.columns) if submission else []
        columns = list(dict.fromkeys([id_column, *declared, *(c for c in metric.columns if c != id_column)]))
        try:
            ids = self.test_ids(variant)
        except MlabError as why:
            return error(f"the submission cannot be validated: {why}")
        scratch = Path(tempfile.mkdtemp(prefix="mlab-validate-"))
        try:
            path = scratch / Path(rel).name
            try:
                copy_submission(ctx.workspace.root, rel, path, MAX_SUBMISSION_BYTES)
            except (FileNotFoundError, NotADirectoryError):
                pass  # the check names the missing file and what it should hold
            except Refused as why:
                return error(f"{why} (expected columns: {', '.join(columns)})" + self.validation(ctx, variant))
            try:
                rules = self.rules(ctx)
                table = check_submission(path, ids, id_column, metric.columns, metric.name, declared, rules=rules)
            except VocabularyError as why:
                return error(f"the submission cannot be validated: {why}")
            except SubmissionError as problem:
                text = str(problem)
                if "expected columns" not in text:
                    text += f" (expected columns: {', '.join(columns)})"
                return error(f"{text}. Nothing was scored." + self.validation(ctx, variant))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        text = (f"{rel} is valid: {len(table):,} rows, columns {', '.join(columns)}; "
                f"ids match the {len(ids):,} test ids. Nothing was scored.")
        extra = self.validation(ctx, variant)
        if extra.lstrip().startswith(VALIDATION_PROBLEM):
            return error(text + extra)
        return Observation(text + extra)

    def validation(self, ctx, variant: dict) -> str:
        """The sentence on the validation submission ("" when the task declares no validation
        split): its score on the validation rows, what is wrong with it, or how to get one."""
        if variant.validation is None:
            return ""
        from mlab.scoring.metrics.tabular import score as metric_score
        from mlab.scoring.metrics.values import MetricError
        from mlab.scoring.constraints import VocabularyError
        from mlab.scoring.score import copy_submission
        from mlab.scoring.submission import MAX_SUBMISSION_BYTES, AnswersError, SubmissionError, check_submission, \
            load_answers

        task = self.run.task
        metric, submission = task.view.metric, task.view.submission
        id_column = variant.id
        declared = list(submission.columns) if submission else []
        answers_path = Path(self.run.private_dir) / VALIDATION_FILE
        params = dict(metric.params)
        scored = [c for c in metric.columns if c != id_column]
        try:
            answers = load_answers(answers_path, id_column, list(metric.columns), metric.name, params)
        except AnswersError as why:
            return f"\n{VALIDATION_PROBLEM} the validation answers cannot be read: {why}"
        count = len(answers)
        scratch = Path(tempfile.mkdtemp(prefix="mlab-validate-"))
        try:
            path = scratch / VALIDATION_SUBMISSION
            try:
                copy_submission(ctx.workspace.root, VALIDATION_SUBMISSION, path, MAX_SUBMISSION_BYTES)
            except (FileNotFoundError, NotADirectoryError):
                return (f"\nNo validation score: write {VALIDATION_SUBMISSION} (the submission's columns, one row "
                        f"for each of the {count:,} rows of {VALIDATION_FILE}) to have it scored.")
            except Refused as why:
                return f"\n{VALIDATION_PROBLEM} {why}"
            try:
                aligned = check_submission(path, list(answers[id_column]), id_column, metric.columns,
                                           metric.name, declared, kind="validation", rules=self.rules(ctx))
                value = metric_score(metric.name, answers, aligned, scored, params)
            except (SubmissionError, MetricError, VocabularyError) as problem:
                return f"\n{VALIDATION_PROBLEM} {problem}"
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        self.measured = float(value)
        return (f"\n{VALIDATION_SUBMISSION}: {metric.name} {format_score(float(value))} on the {count:,} "
                "validation rows (the test answers are never used).")

    def rules(self, ctx) -> list:
        """The task's column constraints, their vocabulary files read from the task's copies beside
        the private answers (never the workspace's)."""
        from mlab.scoring.constraints import load_rules

        submission = self.run.task.view.submission
        return load_rules(submission.constraints, Path(self.run.private_dir)) if submission else []

    def test_ids(self, variant: dict) -> list:
        """The ids of the public test file, read from the run's initial snapshot (once)."""
        if self._ids is None:
            self._ids = public_test_ids(self.run, variant)
        return self._ids


VALIDATION_PROBLEM = "Validation not scored:"


def format_score(value: float) -> str:
    """A score as a person reads it: 14,210 for a large one, 0.8123 for a small one."""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def public_test_ids(run, variant: dict) -> list:
    """The ids of the public file that holds the id column and none of the answer columns (not a
    vocabulary file; of several such files, the one named test.csv)."""
    import pandas as pd

    from mlab.scoring.metrics.values import label_key

    id_column, answers = variant.id, set(variant.answers)
    initial = run.store.get_json(run.meta["initial_snapshot"])
    found = []
    for rel in variant.public:
        if not rel.endswith(".csv") or rel not in initial:
            continue
        data = run.store.get_bytes(initial[rel])
        try:
            header = pd.read_csv(io.BytesIO(data), dtype=str, nrows=0, encoding="utf-8-sig")
        except ValueError:  # not a table (pandas' parser and decoding errors are ValueErrors): no test file
            continue
        names = {str(c).strip() for c in header.columns}
        if id_column in names and not names & answers:
            table = pd.read_csv(io.BytesIO(data), dtype=str, encoding="utf-8-sig")
            table = table.rename(columns=lambda c: str(c).strip())
            found.append((rel, list(table[id_column])))
    if len(found) > 1:  # a vocabulary file or a key table may have an `id` column too
        submission = run.task.view.submission
        vocabularies = {c.vocabulary_file for c in submission.constraints} if submission else set()
        found = [f for f in found if f[0] not in vocabularies]
        named = [f for f in found if Path(f[0]).name == "test.csv"]
        found = named if len(named) == 1 else found
    if len(found) != 1:
        where = ", ".join(rel for rel, _ in found) or "none"
        raise MlabError(f"the task's public files do not name one test file with `{id_column}` ids "
                        f"(found: {where})")
    ids = found[0][1]
    if any(label_key(v) == "" for v in ids):
        raise MlabError(f"the public test file {found[0][0]} has empty ids")
    return ids
