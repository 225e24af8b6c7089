"""`mlab report`: tables (Markdown, CSV, LaTeX) and plots (PNG) over a folder of runs.

What is reported, as in the paper's evaluation and more: success rate and average improvement
(over runs with a valid submission) per task × agent × model and averaged over tasks;
efficiency per run; failure labels per agent × model; a paired comparison of two agents or
models; best-step versus last-step success. Data variants are never mixed: every table and
plot is split by variant. Demonstration runs keep "(demonstration)" in their model's name.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from mlab.errors import StorageError
from mlab.text import printable
from mlab.reports.budget_report import budget_frame, budget_plot, budget_table
from mlab.reports.compare import Comparison, compare
from mlab.reports.comparability import compute_table, hardware_footnote, known_issues, probe_lines, task_labels
from mlab.reports.cost import efficiency_cost_cell, frontier_plot, unknown_pairs
from mlab.reports.eval import evaluate_runs
from mlab.reports.figures import field_tables, task_references
from mlab.reports.runs import DEMO_SUFFIX, LoadedRun, direction_mismatch, load_runs
from mlab.reports.stats import (EFFICIENCY, RESAMPLES, best_versus_last, efficiency, failure_counts, over_tasks,
                           per_task, runs_frame, shared_tasks)
from mlab.reports.tables import Table, number, percent, signed_percent, text, to_markdown, with_interval, write_table
from mlab.reports.plots import NO_VALID_SUBMISSION
from mlab.reports.search import curve_rows, reply_formats, search_summary
from mlab.reports.taxonomy import HALLUCINATED_CLAIM, LABELS

REPORT = "report.md"


@dataclass
class Report:
    folder: Path
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _group_columns(task: bool = False) -> list:
    columns = [("variant", text("data_variant"))]
    if task:
        columns.append(("task", text("task")))
    return columns + [("agent", text("agent")), ("model", text("model"))]


def report_tables(frame: pd.DataFrame, seed: int, comparisons: list[Comparison] | None,
            extra: dict | None = None, shared: pd.DataFrame | None = None) -> tuple[list[Table], dict]:
    """The report's tables; the averages over tasks are of `shared` (stats.shared_tasks), so that
    every agent · model is averaged over the same tasks."""
    tasks, overall = per_task(frame, seed), over_tasks(frame if shared is None else shared, seed)
    tables = [
        Table("per_task", "Success rate and average improvement per task", tasks, _group_columns(True) + [
            ("runs", text("runs")), ("task errors", text("task_errors")),
            ("success rate [95% CI]", lambda r: with_interval(r, "success_rate")),
            ("valid submissions", text("valid_submissions")),
            ("avg improvement [95% CI]", lambda r: with_interval(r, "avg_improvement"))]),
        Table("over_tasks", "Average over tasks", overall, _group_columns() + [
            ("tasks", text("tasks")), ("runs", text("runs")), ("task errors", text("task_errors")),
            ("success rate [95% CI]", lambda r: with_interval(r, "success_rate")),
            ("avg improvement [95% CI]", lambda r: with_interval(r, "avg_improvement"))],
              "The mean over tasks of each task's rate, over the tasks every agent · model ran; intervals "
              "resample runs within each task. Task errors (the task found broken at run time) count in no "
              "success rate."),
        Table("efficiency", "Efficiency per run (mean [95% CI])", efficiency(frame, seed), _group_columns() + [
            ("runs", text("runs"))] + [
            (title, efficiency_cost_cell if column == "cost" else
             lambda r, c=column: with_interval(r, c, as_percent=False, digits=1))
            for column, title in EFFICIENCY.items()],
              "Tokens are prompt plus completion tokens over every model tier; script times are the "
              "agent's own scripts, measured by the kernel."),
    ]
    tables.append(_failures_table(frame))
    extra = {**(extra or {}), "per_task": tasks, "over_tasks": overall}
    for index, comparison in enumerate(comparisons or []):
        compared, info = compare(frame, comparison, seed)
        extra.setdefault("comparison_info", []).append(info)
        tables.append(_comparison_table(index, comparison, compared, info))
    tables += _search_tables(extra)
    best = best_versus_last(frame, seed)
    extra["best_versus_last"] = best
    if not best.empty:
        tables.append(Table("best_vs_last", "Best-step versus last-step success", best, _group_columns() + [
            ("runs with step scores", text("runs")),
            ("last step", lambda r: percent(r["last_step_success"])),
            ("best step", lambda r: percent(r["best_step_success"])),
            ("difference [95% CI]", lambda r: signed_percent(r, "difference"))],
            "Best step: the best-scoring snapshot of the run (scores from `mlab eval --intermediate`)."))
    return tables, extra


def _failures_table(frame: pd.DataFrame) -> Table:
    failures = failure_counts(frame, LABELS)
    present = [label for label in LABELS if label in failures and failures[label].sum() > 0]
    return Table("failures", "Failure labels of unsuccessful runs", failures, _group_columns() + [
        ("runs", text("runs")), ("unsuccessful", text("unsuccessful"))] + [
        (label, text(label)) for label in present] + [
        ("hallucinated claims, any outcome", text("runs with hallucinated claims (any outcome)"))],
        "A run can carry several labels. Labels are computed from the trace and result "
        "(see mlab.reports.taxonomy for the exact rules).")


def _comparison_table(index: int, comparison: Comparison, compared: pd.DataFrame, info: dict) -> Table:
    name = "comparison" if index == 0 else f"comparison_{index + 1}"  # the first keeps its old file name
    return Table(name, f"Paired comparison: {comparison.title}", compared, [
        ("variant", text("data_variant")), ("task", text("task")), ("pairs", text("pairs")),
        (f"success {comparison.first}", lambda r: percent(r["success_a"])),
        (f"success {comparison.second}", lambda r: percent(r["success_b"])),
        ("success difference [95% CI]", lambda r: signed_percent(r, "success_difference")),
        ("improvement difference [95% CI]", lambda r: signed_percent(r, "improvement_difference")),
        ("token difference [95% CI]", lambda r: with_interval(r, "tokens_difference", as_percent=False,
                                                               digits=0))],
        f"{info['pairs']} pairs (same data variant, task, seed and "
        f"{'model' if comparison.factor == 'agent' else 'agent'}); differences are first minus second; "
        f"task and seed combinations without a partner, left out: {info['unpaired_a']} of "
        f"{comparison.first}{_named(info['unpaired_a_named'])}, {info['unpaired_b']} of "
        f"{comparison.second}{_named(info['unpaired_b_named'])}. pp: percentage points.")


def _named(left_out: list[str]) -> str:
    return f" ({'; '.join(left_out)})" if left_out else ""


def _number(column: str, digits: int = 4):
    def shown(row) -> str:
        value = row[column]
        return "–" if value is None or pd.isna(value) else number(float(value), digits)
    return shown


def _search_tables(extra: dict) -> list[Table]:
    """The tree-search table and the reply-format table, when any run calls for them."""
    tables = []
    summary = extra.get("search_summary")
    if summary is not None and not summary.empty:
        tables.append(Table("tree_search", "Tree search: nodes and the chosen node", summary, _group_columns(True) + [
            ("policy", text("policy")), ("runs", text("runs")), ("nodes per run", _number("nodes_per_run", 1)),
            ("valid nodes", lambda r: percent(r["valid_share"])), ("buggy nodes", lambda r: percent(r["buggy_share"])),
            ("best validation", _number("best_validation")), ("chosen node's validation", _number("chosen_validation")),
            ("chosen node's test score", _number("chosen_score")),
            ("chosen = best by validation", lambda r: percent(r["chosen_is_best"])),
            ("chosen by", text("selected_by"))],
            "Validation scores are the agent's own (its script's output or the fast model's review); the test "
            "score is the task's evaluator on the chosen node's workspace. Medians over runs; shares over all "
            "nodes made."))
    formats = extra.get("reply_formats")
    if formats is not None and not formats.empty:
        tables.append(Table("reply_formats", "Reply formats that ran other than declared", formats, [
            ("variant", text("data_variant")), ("agent", text("agent")), ("model", text("model")),
            ("declared", text("declared")), ("ran", text("ran")),
            ("runs", lambda r: f"{r['runs']} of {r['of_runs']}"), ("why", text("reasons"))],
            "A tool agent runs its declared fallback format when asked to (--no-tools) or when the server "
            "refuses the tools field; result.json records which ran (reply_format)."))
    return tables


def _anytime(runs: list[LoadedRun], frame: pd.DataFrame) -> dict[str, list[dict[str, list]]]:
    from mlab.reports.score_rows import score_columns

    several = frame["data_variant"].nunique() > 1
    curves: dict[str, list[dict[str, list]]] = {}
    for run in runs:
        if run.scores and run.finished:
            label = f"{run.agent} · {run.model}" + (f" · {run.variant}" if several else "")
            curves.setdefault(label, []).append(score_columns(run.scores))
    return curves


def _without_valid_submission(per_task: pd.DataFrame) -> list[str]:
    """The groups that have no average improvement at all (not the same as one of 0%)."""
    none = per_task[per_task["valid_submissions"] == 0]
    if none.empty:
        return []
    several = per_task["data_variant"].nunique() > 1
    shown = "; ".join(f"{r.task} · {r.agent} · {r.model}" + (f" ({r.data_variant})" if several else "")
                      for r in none.itertuples())
    return [f"No valid submission, so no average improvement (marked \"{NO_VALID_SUBMISSION}\" in the plot, "
            f"not a 0% bar): {shown}.", ""]


def _summary(frame: pd.DataFrame, unfinished: int, runs_dir: Path, seed: int) -> list[str]:
    variants = frame["data_variant"].value_counts().sort_index()
    lines = [f"{len(frame)} finished runs from `{runs_dir}`: {frame['task'].nunique()} task(s), "
             f"{frame['agent'].nunique()} agent(s), {frame['model'].nunique()} model(s)."]
    if unfinished:
        lines.append(f"{unfinished} unfinished run(s) (no result.json) are left out of every table.")
    shown = ", ".join(f"{name} ({count} runs)" for name, count in variants.items())
    if len(variants) > 1:
        lines.append(f"Data variants: {shown}. Variants are reported separately and never averaged together.")
    else:
        lines.append(f"Data variant: {shown}.")
    demos = int(frame["demo"].sum())
    if demos:
        lines.append(f"**{demos} run(s) were played by the keyless demo model: demonstrations, not agent "
                     f"results.** Their model is named `mlab/demo{DEMO_SUFFIX}` in every table and plot.")
    bare = sorted(frame.loc[frame["sandboxed"].eq(False), "run_id"]) if "sandboxed" in frame else []
    if bare:
        lines.append(f"**{len(bare)} run(s) ran scripts without the sandbox** (bubblewrap missing or turned off; "
                     "result.json's `sandbox`): their scripts could read every file this user can, the answers "
                     f"included, and use the network, so nothing kept them from the answers: {', '.join(bare)}.")
    lines.append(f"Intervals are 95% percentile bootstrap intervals ({RESAMPLES} resamples, seed {seed}). "
                 "Average improvement counts only runs with a valid submission, as in MLAgentBench; "
                 "improvement is relative to the baseline and positive when better, for any metric direction.")
    return lines


def write_report(runs_dir: Path, out_dir: Path, comparisons: list[Comparison] | Comparison | None = None,
                 seed: int = 0, by_version: bool = False) -> Report:
    """Compute every table and plot from the runs under `runs_dir` into `out_dir`, with one paired
    comparison table per comparison. Runs of one task on different versions (or data) are refused
    unless `by_version` reports them side by side (reports/comparability.py)."""
    finished, unfinished, left_out = _reportable_runs(runs_dir)
    labels = task_labels(finished, by_version)  # refuses to pool task versions before anything is written
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as problem:
        raise StorageError(f"cannot create {out_dir}: {problem.strerror or problem}") from None
    report = Report(out_dir)
    frame = _runs_frame(finished, labels, report)
    if isinstance(comparisons, Comparison):
        comparisons = [comparisons]
    comparisons = list(comparisons or [])
    shared, shared_notes = shared_tasks(frame)  # what ranks or pairs agents and models: the same work
    tables, extra = report_tables(frame, seed, comparisons, {"search_summary": search_summary(finished),
                                                             "reply_formats": reply_formats(finished)}, shared)
    tables.insert(3, compute_table(frame))
    field, _, frontier = field_tables(frame, task_references(finished, labels), seed, shared)
    tables += field
    _note_hardware(tables, comparisons, frame, report)
    for run, why in left_out:
        report.notes.append(f"left out {printable(run.dir.name)}: {printable(why)}")
    lines = ["# mlab report", "", *_summary(frame, unfinished, runs_dir, seed), ""]
    for note in shared_notes:
        lines += [f"**Compared on the same tasks.** {note}", ""]
    issues = known_issues(finished)
    if issues:
        lines += ["## Known issues of the reported tasks", "", *issues, ""]
    lines += probe_lines(runs_dir)
    plots_made = _plots(finished, labels, frame, extra, frontier, tables, set(shared["run_id"]), seed, report)
    lines += _sections(tables, plots_made, extra, report)
    for note in report.notes:
        lines += [f"Note: {note}.", ""]
    claims = int((frame["hallucinated_claims"] > 0).sum())
    if claims:
        lines += [f"{claims} run(s) state numbers as confirmed that no earlier observation showed "
                  f"(label `{HALLUCINATED_CLAIM}`); `mlab view RUN_DIR` marks them in the trace.", ""]
    (out_dir / REPORT).write_text("\n".join(lines), encoding="utf-8")
    report.files = [out_dir / REPORT, *report.files, *plots_made.values()]
    return report


def _reportable_runs(runs_dir: Path) -> tuple[list, int, list]:
    """The finished runs to report, how many are unfinished, and the (run, why) left out because
    their result contradicts their task (a forged or damaged result.json: never compared with the
    others, as run folders may come from elsewhere)."""
    from mlab.errors import UsageError

    runs = load_runs([runs_dir])
    finished = [run for run in runs if run.finished]
    if not finished:
        raise UsageError(f"none of the {len(runs)} run(s) in {runs_dir} has finished (no result.json); "
                         "nothing to report")
    left_out = [(run, why) for run in finished if (why := direction_mismatch(run))]
    if left_out:
        dropped = {id(run) for run, _ in left_out}
        kept = [run for run in finished if id(run) not in dropped]
        if not kept:
            raise UsageError(f"no run in {runs_dir} can be reported: {left_out[0][1]} ({left_out[0][0].dir.name})")
        return kept, len(runs) - len(finished), left_out
    return finished, len(runs) - len(finished), left_out


def _runs_frame(finished: list, labels: dict, report: Report):
    """The runs' rows as a frame, written to runs.csv."""
    rows = evaluate_runs(finished)
    for row in rows:
        row["task"] = labels[row["run_id"]]
    frame = runs_frame(rows)
    frame.drop(columns=["success_value", "improvement_valid", "task_error"]).to_csv(report.folder / "runs.csv",
                                                                                   index=False)
    report.files.append(report.folder / "runs.csv")
    return frame


def _note_hardware(tables: list, comparisons: list, frame, report: Report) -> None:
    """A footnote under each comparison made across hardware classes."""
    compared = [t for t in tables if t.name == "comparison" or t.name.startswith("comparison_")]
    for table, comparison in zip(compared, comparisons):
        footnote = hardware_footnote(frame, comparison.factor, comparison.first, comparison.second)
        if footnote:
            table.note = f"{table.note} {footnote}"
            report.notes.append(footnote.lstrip("† "))


def _plots(finished: list, labels: dict, frame, extra: dict, frontier, tables: list, shared_runs: set,
           seed: int, report: Report) -> dict:
    """Every plot the runs allow, by name (with the CSV files and the budget table behind some)."""
    from mlab.reports import plots

    out_dir = report.folder
    plots_made = {
        "success_heatmap": plots.success_heatmap(extra["per_task"], out_dir / "success_heatmap.png"),
        "improvement_bars": plots.improvement_bars(extra["per_task"], extra["over_tasks"],
                                                   out_dir / "improvement_bars.png"),
        "tokens_vs_success": plots.tokens_vs_success(frame, out_dir / "tokens_vs_success.png"),
    }
    tree_curves = curve_rows(finished)
    if not tree_curves.empty:
        tree_curves.to_csv(out_dir / "tree_anytime.csv", index=False)
        report.files.append(out_dir / "tree_anytime.csv")
        plots_made["tree_anytime"] = plots.tree_anytime(tree_curves, out_dir / "tree_anytime.png")
    budget_points = budget_frame(finished, labels)
    if not budget_points.empty:  # points that `mlab eval --at` kept in the runs' budgets.json
        budget_points.to_csv(out_dir / "budget_points.csv", index=False)
        report.files.append(out_dir / "budget_points.csv")
        tables.append(budget_table(budget_points, seed, shared_runs))
        plots_made["budget_scores"] = budget_plot(budget_points, out_dir / "budget_scores.png", seed)
    if not frontier.empty and frontier["cost_known"].any():
        plots_made["cost_frontier"] = frontier_plot(frontier, out_dir / "cost_frontier.png")
    unpriced = unknown_pairs(frontier)
    if unpriced:
        report.notes.append(f"cost is unknown for {', '.join(unpriced)}: a model of their runs has no price in "
                            "litellm's price map, so they are not placed on the cost frontier")
    curves = _anytime(finished, frame)
    if curves:
        plots_made["anytime"] = plots.anytime_curves(curves, out_dir / "anytime.png")
    else:
        report.notes.append("no intermediate scores: run `mlab eval --intermediate RUN_DIR...` for anytime "
                            "curves and best-step success")
    return plots_made


def _sections(tables: list, plots_made: dict, extra: dict, report: Report) -> list[str]:
    """The report's sections: each table written and shown, with the plot that goes after it."""
    after = {"per_task": "success_heatmap", "over_tasks": "improvement_bars", "efficiency": "tokens_vs_success",
             "tree_search": "tree_anytime", "budget_success": "budget_scores", "cost_frontier": "cost_frontier"}
    lines = []
    for table in tables:
        report.files += write_table(table, report.folder)
        lines += [f"## {table.title}", "", to_markdown(table), ""]
        if table.note:
            lines += [table.note, ""]
        plot = after.get(table.name)
        if plot in plots_made:
            lines += [f"![{plot.replace('_', ' ')}]({plots_made[plot].name})", ""]
        if plot == "improvement_bars":
            lines += _without_valid_submission(extra["per_task"])
    if "anytime" in plots_made:
        lines += ["## Anytime performance", "", f"![anytime curves]({plots_made['anytime'].name})", ""]
    return lines

