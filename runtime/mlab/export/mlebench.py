"""MLE-bench grading reports: runs of tasks that declare medal thresholds, graded as MLE-bench's
grader reports a competition, with its summary totals.

MLE-bench (openai/mle-bench, `mlebench/grade.py`) writes one report per graded submission
(competition_id, score, the gold, silver, bronze and median thresholds, any_medal, gold_medal,
silver_medal, bronze_medal, above_median, submission_exists, valid_submission, is_lower_better,
created_at, submission_path) and a summary of them (total_runs, total_runs_with_submissions,
total_valid_submissions, total_medals, total_gold_medals, total_silver_medals,
total_bronze_medals, total_above_median, competition_reports). Here a competition is a task, a
submission the final submission of one run as mlab scored it, and the thresholds those the task
declares (`thresholds { gold .. silver .. bronze .. median .. }`), else those its leaderboard file
(`leaderboard "FILE.csv" source ".."`) gives by MLE-bench's rule by the number of teams, with the
leaderboard's median as the median threshold (mlab.reports.medals). A medal is MLE-bench's rule
(mlab.reports.medals): the best threshold the score reaches, at least as good as it; above_median
is strictly better than the median. The score is rounded to 5 decimals, as MLE-bench's grader
rounds it, before it is ranked.

A run that cannot be graded so (unfinished, a demonstration run, its task declares neither
thresholds nor a leaderboard, its build copy is missing) is left out and listed, with the reason, under the
summary's `mlab` object (`skipped`); runs of one task made on different task versions or data variants are
refused, as the report refuses to pool them. docs/interop.md maps every field.
"""
from __future__ import annotations

import math
from datetime import datetime, timezone
from pathlib import Path

from mlab.errors import UsageError
from mlab.export.files import write_new
from mlab.standard_json import json_text
from mlab.reports.medals import leaderboard_scores, medal, percentile, task_thresholds
from mlab.reports.runs import LoadedRun, direction_mismatch, load_runs, task_document

LEVELS = ("gold", "silver", "bronze", "median")
SCORE_DECIMALS = 5  # MLE-bench's grader rounds every score so


def thresholds_of(run: LoadedRun) -> dict | None:
    """The task's thresholds ({level: value, "source": ..., "from": "declared" or "leaderboard"}):
    the declared ones, else those its leaderboard file gives (with the leaderboard's median), else None."""
    task = task_document(run)
    refs = task.references if task is not None else None
    lower = task is not None and task.metric.direction == "lower_is_better"
    values, origin = task_thresholds(refs, lower)
    if origin is None:
        return None
    source = refs.thresholds.source if origin == "declared" else refs.leaderboard.source
    return {**values, "source": source, "from": origin}


def _percentile(run: LoadedRun, score: float | None, lower: bool) -> float | None:
    task = task_document(run)
    scores = leaderboard_scores(task.references if task is not None else None)
    return percentile(score, scores, lower) if scores else None


def _score(result: dict) -> float | None:
    score = result.get("score")
    if not isinstance(score, (int, float)) or isinstance(score, bool) or not math.isfinite(score):
        return None
    return round(float(score), SCORE_DECIMALS)


def _threshold(thresholds: dict, level: str) -> float | None:
    value = thresholds.get(level)
    return None if value is None else float(value)


def competition_report(run: LoadedRun, thresholds: dict, created_at: str) -> dict:
    """One run as MLE-bench's CompetitionReport, plus the run's identity under `mlab`."""
    result = run.result or {}
    lower = result.get("direction") == "lower_is_better"
    score = _score(result)
    won = medal(score, {m: thresholds.get(m) for m in ("gold", "silver", "bronze")}, lower)
    median = _threshold(thresholds, "median")
    above = score is not None and median is not None and (score < median if lower else score > median)
    task = task_document(run)
    submission = task.submission.file if task is not None and task.submission is not None else "submission.csv"
    return {
        "competition_id": run.task, "score": score,
        **{f"{level}_threshold": _threshold(thresholds, level) for level in LEVELS},
        "any_medal": won is not None, "gold_medal": won == "gold", "silver_medal": won == "silver",
        "bronze_medal": won == "bronze", "above_median": above,
        "submission_exists": bool(result.get("submitted")), "valid_submission": score is not None,
        "is_lower_better": lower, "created_at": created_at,
        "submission_path": str(run.dir.resolve() / "workspace" / submission),
        "mlab": {"run_id": run.id, "agent": run.agent, "model": run.model, "seed": run.seed,
                 "data_variant": run.variant, "task_version": run.task_version, "medal": won,
                 "thresholds_source": thresholds.get("source"), "thresholds_from": thresholds.get("from"),
                 "percentile": _percentile(run, score, lower)},
    }


def summary(reports: list[dict]) -> dict:
    """MLE-bench's summary totals over the reports, with the reports themselves."""
    count = {name: sum(bool(r[name]) for r in reports)
             for name in ("gold_medal", "silver_medal", "bronze_medal", "above_median",
                          "submission_exists", "valid_submission")}
    return {"total_runs": len(reports), "total_runs_with_submissions": count["submission_exists"],
            "total_valid_submissions": count["valid_submission"],
            "total_medals": count["gold_medal"] + count["silver_medal"] + count["bronze_medal"],
            "total_gold_medals": count["gold_medal"], "total_silver_medals": count["silver_medal"],
            "total_bronze_medals": count["bronze_medal"], "total_above_median": count["above_median"],
            "competition_reports": reports}


def _why_not(run: LoadedRun) -> str | None:
    if run.result is None:
        return "the run has not finished (no result.json)"
    if run.demo:
        return "a demonstration run (mlab/demo) is not an agent's result"
    if task_document(run) is None:
        return "the run's build copy (build/tasks/<task>/task.yaml) is missing"
    mismatch = direction_mismatch(run)
    if mismatch:
        return f"{mismatch}; the result cannot be graded"
    if thresholds_of(run) is None:
        return (f"task `{run.task}` declares no thresholds (thresholds {{ gold .. silver .. bronze .. }}) "
                f"and no leaderboard file (leaderboard \"FILE.csv\" source \"...\")")
    return None


def _refuse_mixed(runs: list[LoadedRun]) -> None:
    seen: dict[str, tuple[LoadedRun, tuple]] = {}
    for run in runs:
        key = (run.task_version, run.variant)
        first = seen.setdefault(run.task, (run, key))
        if first[1] != key:
            raise UsageError(f"runs of task `{run.task}` were made on different versions or data variants "
                             f"(version {first[1][0]} {first[1][1]} in {first[0].dir}, version {key[0]} {key[1]} "
                             f"in {run.dir}); a grading report pools a task's runs: export them apart")


def grading_report(paths: list[Path], now: datetime | None = None) -> dict:
    """The summary report of every run at or under `paths`; runs that cannot be graded are listed
    in the summary's `mlab` object (`skipped`). UsageError when no run is found or none can be graded."""
    skipped: list[dict] = []
    runs = load_runs([Path(p) for p in paths], skipped)   # unreadable result.json, run.json: skipped with the reason
    created_at = (now or datetime.now(timezone.utc)).isoformat()
    graded = []
    for run in runs:
        reason = _why_not(run)
        if reason:
            skipped.append({"run": str(run.dir), "task": run.task, "reason": reason})
        else:
            graded.append(run)
    if not graded:
        raise UsageError("no run can be graded for MLE-bench: " + "; ".join(
            f"{s['run']}: {s['reason']}" for s in skipped))
    _refuse_mixed(graded)
    report = summary([competition_report(run, thresholds_of(run), created_at) for run in graded])
    report["mlab"] = {"skipped": skipped}
    return report


def write_mlebench(paths: list[Path], output: Path | None) -> tuple[list[str], list[str]]:
    """`mlab export RUNS --to mle-bench [-o FILE]`: the summary report to FILE (new) or stdout.
    Returns (lines for stdout, lines for stderr: the runs left out and why)."""
    report = grading_report(paths)
    text = json_text(report)
    notes = [f"skipped {s['run']}: {s['reason']}" for s in report["mlab"]["skipped"]]
    if output is None:
        return [text.rstrip("\n")], notes
    write_new(output, text.encode("utf-8"))
    return [f"wrote {output}: MLE-bench grading report of {report['total_runs']} run(s), "
            f"{report['total_medals']} medal(s) ({report['total_gold_medals']} gold, "
            f"{report['total_silver_medals']} silver, {report['total_bronze_medals']} bronze)"], notes
