"""Score the submission in a workspace with its task's metric (tabular here; timed and evaluator
metrics in mlab.scoring.timed and mlab.scoring.evaluator).

The submission is validated first: a missing file, wrong columns, missing or duplicate ids,
empty values or a broken column constraint give the failure mode `submission format error` with
what was expected — never a crash and never a made-up score.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from mlab.confined import Refused, copy_out
from mlab.errors import MlabError
from mlab.failure import FailureMode
from mlab.scoring.outcome import Score


def score_workspace(task, variant_name: str, workspace: Path, private_dir: Path) -> Score:
    """The task's metric on the submission in `workspace`, or why there is none."""
    metric = task.view.metric
    scorer = SCORERS.get(metric.kind)
    if scorer is None:
        return _not_scored(metric)
    return scorer.workspace()(task, variant_name, workspace, private_dir)


def score_run(run) -> Score:
    """The task's metric on the run's final workspace. A kind that needs the run itself (a timed
    metric times the run's own starter beside the submission) scores through its run scorer."""
    metric = run.task.view.metric
    scorer = SCORERS.get(metric.kind)
    if scorer is None:
        return _not_scored(metric)
    if scorer.run is not None:
        return scorer.run()(run)
    if metric.kind == "tabular":  # pandas (and scikit-learn) stay out of the process driving the agent
        from mlab.scoring.child import call

        return call("mlab.scoring.score:score_tabular", run.task, run.meta["data"]["variant"], run.workspace.root,
                    run.private_dir)
    return scorer.workspace()(run.task, run.meta["data"]["variant"], run.workspace.root, run.private_dir)


def _not_scored(metric) -> Score:
    return Score(None, False, FailureMode.NOT_SCORED,
                 f"the {metric.name} metric ({metric.kind}) is not scored by this version of mlab")


def score_tabular(task, variant_name: str, workspace: Path, private_dir: Path) -> Score:
    """A tabular metric on the submission file in `workspace` against the private answers."""
    from mlab.scoring.metrics.tabular import score as metric_score
    from mlab.scoring.metrics.values import MetricError
    from mlab.scoring.constraints import VocabularyError, load_rules
    from mlab.scoring.submission import (MAX_SUBMISSION_BYTES, AnswersError, SubmissionError, check_submission,
                                         load_answers)

    metric, submission = task.view.metric, task.view.submission
    variant = task.variant(variant_name)
    rel = submission.file if submission and submission.file else "submission.csv"
    expected = ", ".join(submission.columns if submission else ()) or "the declared columns"
    scratch = Path(tempfile.mkdtemp(prefix="mlab-submission-"))
    try:
        # Scored from a harness-owned copy made through the confined reader, never from the
        # workspace path itself: a link or special file there is refused, and nothing can be
        # swapped between the checks and the read.
        path = scratch / Path(rel).name
        try:
            copy_submission(workspace, rel, path, MAX_SUBMISSION_BYTES)
        except (FileNotFoundError, NotADirectoryError):
            return Score(None, False, FailureMode.SUBMISSION_FORMAT_ERROR,
                         f"no submission: {rel} (columns {expected}) was not found in the workspace")
        except Refused as why:
            return Score(None, True, FailureMode.SUBMISSION_FORMAT_ERROR, f"{why} (expected columns: {expected})")
        answers_path = Path(private_dir) / variant.private[0]
        columns = list(metric.columns)
        try:
            params = dict(metric.params)
            answers = load_answers(answers_path, variant.id, columns, metric.name, params)
            # the answers are read once; the check is Validate Submission's own (check_submission)
            rules = load_rules(submission.constraints, private_dir) if submission else ()
            aligned = check_submission(path, answers[variant.id], variant.id, columns, metric.name,
                                       declared=submission.columns if submission else (), rules=rules)
            value = metric_score(metric.name, answers, aligned, [c for c in columns if c != variant.id], params)
        except SubmissionError as problem:
            text = str(problem)
            if "expected columns" not in text:
                text += f" (expected columns: {expected})"
            _task_fault(task, variant_name, private_dir)
            return Score(None, True, FailureMode.SUBMISSION_FORMAT_ERROR, text)
        except (AnswersError, VocabularyError) as problem:
            raise MlabError(f"task {task.name}: {problem}") from None
        except MetricError as problem:
            _task_fault(task, variant_name, private_dir)
            return Score(None, True, FailureMode.SUBMISSION_FORMAT_ERROR, str(problem))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    _task_fault(task, variant_name, private_dir)  # a score the task's data makes meaningless is none
    return Score(float(value), True)


def _task_fault(task, variant_name: str, private_dir: Path) -> None:
    """MlabError (result.json's `task error`, never the agent's) when the task's data model
    explains the outcome: ids that do not name the test rows, blank answers, answers the metric
    cannot score or a probability table cannot name, constraints the answers break."""
    from mlab.data.faults import SCORING_CODES, describe, findings
    from mlab.data.prepare import prepare_data

    empty = None
    try:
        public = prepare_data(task, variant_name).public  # the cached preparation: its test table
    except MlabError:
        public = empty = Path(tempfile.mkdtemp(prefix="mlab-no-public-"))  # the answers alone are checked
    try:
        found = findings(task, variant_name, public, Path(private_dir), SCORING_CODES, light=True)
    except (OSError, ValueError, KeyError) as problem:
        raise MlabError(f"task {task.name}: its data could not be read: {problem}") from None
    finally:
        if empty is not None:
            shutil.rmtree(empty, ignore_errors=True)
    if found:
        raise MlabError(f"task {task.name}: its data explains the outcome: {describe(found)}")


def copy_submission(workspace: Path, rel: str, destination: Path, limit: int) -> None:
    """Copy the workspace's file `rel` through the confined reader into a harness-owned file.

    At most limit + 1 bytes are copied; a larger file's copy is then given its real size as a
    hole, so the size check that follows names it without the harness storing it.
    """
    size = copy_out(workspace, rel, destination, limit)
    if size > limit:
        os.truncate(destination, size)


def _timed():
    from mlab.scoring.timed import score_timed

    return score_timed


def _timed_run():
    from mlab.scoring.timed import score_run_timed

    return score_run_timed


def _evaluator():
    from mlab.scoring.evaluator import score_with_evaluator

    return score_with_evaluator


@dataclass(frozen=True)
class Scorer:
    """How one metric kind is scored: functions that give its workspace scorer and, for a kind
    that needs the whole run, its run scorer. They are functions so that timed and evaluator
    scoring, which import the sandbox, are imported only when a task of their kind is scored."""

    workspace: Callable[[], Callable]
    run: Callable[[], Callable] | None = None


# metric kind → its scorer: the one table scoring dispatches through
SCORERS = {"tabular": Scorer(lambda: score_tabular), "timed": Scorer(_timed, _timed_run),
           "evaluator": Scorer(_evaluator)}
