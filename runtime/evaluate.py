"""Score a run's submission with its task's metric, against the baseline, into result.json.

The submission is validated first: a missing file, wrong columns, missing or
duplicate ids or empty values give the failure mode `submission format error`
with what was expected — never a crash and never a made-up score. A `baseline
run "script"` comes from the task's recorded baselines (tasks/baselines.json, see
mlab.baseline) when their code hash matches, else it is measured by running the
starter in the sandbox on the run's prepared workspace, once per build and data
preparation (cached). Timed metrics (mlab.timed) time the starter side by side with the
submission instead; evaluator metrics run the task's evaluator (mlab.task_evaluator).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .cache import cache_root
from .confined import Refused, copy_out
from .errors import MlabError

SUBMISSION_FORMAT_ERROR = "submission format error"


@dataclass
class Score:
    value: float | None
    submitted: bool
    failure_mode: str | None = None
    detail: str | None = None
    baseline: dict | None = None  # timed metrics: the starter timed side by side


def score_workspace(task, variant_name: str, workspace: Path, private_dir: Path) -> Score:
    """The task's metric on the submission in `workspace`, or why there is none."""
    from . import metrics
    from .submission import MAX_SUBMISSION_BYTES, AnswersError, SubmissionError, load_and_validate, load_answers

    doc = task.doc
    metric = doc["metric"]
    if metric["kind"] == "timed":
        from .timed import score_timed

        return score_timed(task, variant_name, workspace, private_dir)
    if metric["kind"] == "evaluator":
        from .task_evaluator import score_with_evaluator

        return score_with_evaluator(task, variant_name, workspace, private_dir)
    if metric["kind"] != "tabular":
        return Score(None, False, "not scored",
                     f"the {metric['name']} metric ({metric['kind']}) is not scored by this version of mlab")
    submission = doc["submission"] or {}
    variant = task.variant(variant_name)
    rel = submission.get("file", "submission.csv")
    expected = ", ".join(submission.get("columns") or []) or "the declared columns"
    scratch = Path(tempfile.mkdtemp(prefix="mlab-submission-"))
    try:
        # Scored from a harness-owned copy made through the confined reader, never from the
        # workspace path itself: a link or special file there is refused, and nothing can be
        # swapped between the checks and the read.
        path = scratch / Path(rel).name
        try:
            copy_submission(workspace, rel, path, MAX_SUBMISSION_BYTES)
        except (FileNotFoundError, NotADirectoryError):
            return Score(None, False, SUBMISSION_FORMAT_ERROR,
                         f"no submission: {rel} (columns {expected}) was not found in the workspace")
        except Refused as why:
            return Score(None, True, SUBMISSION_FORMAT_ERROR, f"{why} (expected columns: {expected})")
        answers_path = Path(private_dir) / variant["private"][0]
        columns = metric["columns"]
        try:
            answers = load_answers(answers_path, variant["id"], columns, metric["name"])
            aligned = load_and_validate(path, answers_path, variant["id"], columns, metric["name"])
            value = metrics.score(metric["name"], answers, aligned, [c for c in columns if c != variant["id"]])
        except SubmissionError as problem:
            text = str(problem)
            if "expected columns" not in text:
                text += f" (expected columns: {expected})"
            return Score(None, True, SUBMISSION_FORMAT_ERROR, text)
        except AnswersError as problem:
            raise MlabError(f"task {task.name}: {problem}") from None
        except metrics.MetricError as problem:
            return Score(None, True, SUBMISSION_FORMAT_ERROR, str(problem))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return Score(float(value), True)


def copy_submission(workspace: Path, rel: str, destination: Path, limit: int) -> None:
    """Copy the workspace's file `rel` through the confined reader into a harness-owned file.

    At most limit + 1 bytes are copied; a larger file's copy is then given its real size as a
    hole, so the size check that follows names it without the harness storing it.
    """
    size = copy_out(workspace, rel, destination, limit)
    if size > limit:
        os.truncate(destination, size)


def _baseline_key(run) -> str:
    import hashlib

    doc = run.task.doc
    parts = [run.meta["build"]["digest"], run.meta["data"]["key"], json.dumps(doc["baseline"], sort_keys=True),
             run.meta["python"]]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def measure_baseline(run) -> dict:
    """The baseline: declared, or measured by running the starter script (cached)."""
    baseline = run.task.doc["baseline"]
    if baseline["kind"] == "value":
        return {"kind": "value", "value": baseline["value"], "reason": baseline["reason"], "measured": False}
    if run.task.doc["metric"]["kind"] == "timed":
        return {"kind": "run", "script": baseline["script"], "value": None, "measured": True,
                "timed": "measured side by side with the submission at evaluation"}
    from .baseline import recorded_baseline

    recorded = recorded_baseline(run.task, run.meta["data"]["variant"])
    if recorded is not None:
        return recorded
    cache = cache_root() / "baselines" / f"{run.task.name}-{run.meta['data']['variant']}-{_baseline_key(run)}.json"
    if cache.is_file():
        try:
            return json.loads(cache.read_text(encoding="utf-8"))
        except ValueError:
            pass
    result = _run_starter(run, baseline["script"])
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(result, indent=2), encoding="utf-8")
    except OSError:
        pass  # the cache is an optimisation; the result stands without it
    return result


def _run_starter(run, script: str) -> dict:
    from .snapshots import ObjectStore, restore_files

    store = ObjectStore(run.dir / "objects", durable=False)
    initial = store.get_json(run.meta["initial_snapshot"])
    folder = Path(tempfile.mkdtemp(prefix="mlab-baseline-"))
    try:
        workspace = folder / "workspace"
        restore_files(store, initial, workspace)
        outcome = run.scripts.run(workspace, [script])
        score = score_workspace(run.task, run.meta["data"]["variant"], workspace, run.private_dir)
        return {"kind": "run", "script": script, "value": score.value, "measured": True,
                "exit_code": outcome.exit_code, "wall_s": round(outcome.wall_s, 3),
                "failure": score.detail if score.value is None else None}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def evaluate(run, outcome_failure: str | None = None, outcome_detail: str | None = None) -> dict:
    """Score the run's final workspace and compare with the baseline (the core of result.json)."""
    from .metrics import improvement, is_success, timed_rounds_succeed

    doc = run.task.doc
    if doc["metric"]["kind"] == "timed":
        from .timed import score_run_timed

        score = score_run_timed(run)
        baseline = score.baseline or measure_baseline(run)
    else:
        score = score_workspace(run.task, run.meta["data"]["variant"], run.workspace.root, run.private_dir)
        baseline = measure_baseline(run)
    direction = doc["metric"]["direction"]
    threshold = doc["success"]["improvement"]
    gain = None
    if score.value is not None and baseline.get("value") is not None:
        gain = improvement(score.value, baseline["value"], direction)
    success = gain is not None and is_success(gain, threshold)
    noisy = success and not timed_rounds_succeed(baseline.get("paired_speedups"), threshold)
    success = success and not noisy
    failure, detail = outcome_failure, outcome_detail
    if failure is None and score.failure_mode:
        failure, detail = score.failure_mode, score.detail
    elif failure is None and noisy:
        from .metrics import rounds_clearing, rounds_required

        paired = baseline["paired_speedups"]
        failure, detail = "small improvement", (
            f"improvement {gain:.1%} (medians of {len(paired)} rounds) reaches the threshold {threshold:.0%}, "
            f"but only {rounds_clearing(paired, threshold)} of the {len(paired)} rounds did "
            f"({rounds_required(len(paired))} needed): a speed-up that not enough rounds show cannot be "
            f"told apart from timing noise")
    elif failure is None and not success and gain is not None:
        failure, detail = "small improvement", f"improvement {gain:.1%} is below the threshold {threshold:.0%}"
    return {"metric": doc["metric"]["name"], "direction": direction, "score": score.value,
            "baseline": baseline, "improvement": gain, "threshold": threshold, "success": success,
            "submitted": score.submitted, "failure_mode": failure, "detail": detail,
            "submission_problem": score.detail if score.failure_mode else None}
