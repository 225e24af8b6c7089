"""Score a run's submission with its task's metric, against the baseline, into result.json.

The submission is scored by mlab.scoring.score. A `baseline
run "script"` comes from the task's recorded baselines (tasks/baselines.json, see
mlab.scoring.baseline) when their code hash matches, else it is measured by running the
starter in the sandbox on the run's prepared workspace, once per build and data
preparation (cached). Timed metrics (mlab.scoring.timed) time the starter side by side with the
submission instead; evaluator metrics run the task's evaluator (mlab.scoring.evaluator).
"""
from __future__ import annotations

from mlab.scoring.baseline import measure_baseline, starter_crashed
from mlab.errors import MlabError
from mlab.failure import FailureMode
from mlab.scoring.score import score_run


def metric_display(metric) -> dict:
    """result.json's `metric_display`: the display name a task gives its metric (`custom(name = ...)`)."""
    name = dict(metric.params).get("name")
    return {"metric_display": name} if isinstance(name, str) else {}


def evaluate(run, outcome_failure: str | None = None, outcome_detail: str | None = None) -> dict:
    """Score the run's final workspace and compare with the baseline (the core of result.json)."""
    view = run.task.view
    try:
        score = score_run(run)
        baseline = score.baseline or measure_baseline(run)  # a timed score brings the starter timed beside it
    except MlabError as problem:
        # Scorers report what is wrong with a submission as a Score; what they raise is the task's
        # own fault (unreadable answers, a missing or crashing evaluator): never the agent's.
        return {"metric": view.metric.name, **metric_display(view.metric), "direction": view.metric.direction,
                "score": None,
                "baseline": {"kind": run.task.view.baseline.kind, "value": None, "measured": False,
                             "failure": str(problem)},
                "improvement": None, "threshold": view.success.improvement, "success": False, "submitted": False,
                "failure_mode": FailureMode.TASK_ERROR, "detail": f"the task could not be scored: {problem}",
                "submission_problem": None}
    return judged(view, score, baseline, outcome_failure, outcome_detail)


def judged(view, score, baseline: dict, outcome_failure: str | None = None, outcome_detail: str | None = None) -> dict:
    """A score against its baseline: improvement, success, and the failure mode and detail of a run
    that did not succeed (the run's own failure first, then the submission's, then noise, a missing
    baseline, a small improvement). The core of result.json, also of an exported task's verifier."""
    from mlab.scoring.metrics.tabular import improvement, is_success
    from mlab.scoring.metrics.timing import timed_rounds_succeed

    direction = view.metric.direction
    threshold = view.success.improvement
    gain = None
    if score.value is not None and baseline.get("value") is not None:
        gain = improvement(score.value, baseline["value"], direction)
    success = gain is not None and is_success(gain, threshold)
    noisy = success and not timed_rounds_succeed(baseline.get("paired_speedups"), threshold)
    success = success and not noisy
    failure, detail = outcome_failure, outcome_detail
    if failure is None and starter_crashed(baseline):
        # the task's own starter cannot run in the workspace: the task is broken, whatever the agent did
        failure, detail = FailureMode.TASK_ERROR, "the baseline could not be measured: " + str(baseline["failure"])
    if failure is None and score.failure_mode:
        failure, detail = score.failure_mode, score.detail
    elif failure is None and noisy:
        from mlab.scoring.metrics.timing import rounds_clearing, rounds_required

        paired = baseline["paired_speedups"]
        failure, detail = FailureMode.SMALL_IMPROVEMENT, (
            f"improvement {gain:.1%} (medians of {len(paired)} rounds) reaches the threshold {threshold:.0%}, "
            f"but only {rounds_clearing(paired, threshold)} of the {len(paired)} rounds did "
            f"({rounds_required(len(paired))} needed): a speed-up that not enough rounds show cannot be "
            f"told apart from timing noise")
    elif failure is None and score.value is not None and baseline.get("value") is None:
        # a scored submission with no baseline to compare it with: the task's starter is broken
        failure, detail = FailureMode.TASK_ERROR, ("the baseline could not be measured: "
                                                   + str(baseline.get("failure") or baseline.get("detail")
                                                         or "the starter gave no score"))
    elif failure is None and not success and gain is not None:
        failure, detail = FailureMode.SMALL_IMPROVEMENT, f"improvement {gain:.1%} is below the threshold {threshold:.0%}"
    return {"metric": view.metric.name, **metric_display(view.metric), "direction": direction, "score": score.value,
            "baseline": baseline, "improvement": gain, "threshold": threshold, "success": success,
            "submitted": score.submitted, "failure_mode": failure, "detail": detail,
            "submission_problem": score.detail if score.failure_mode else None}
