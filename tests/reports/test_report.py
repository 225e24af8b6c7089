"""`mlab report`: its numbers checked against values computed here from the runs' own files."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from report_helpers import mlab


def expected_model(result: dict) -> str:
    model = result["models"]["main"]["model"]
    if result["demo"]:
        return f"{model} (demonstration)"
    return "mlab/scripted" if model.startswith("mlab/scripted:") else model


@pytest.fixture(scope="session")
def results(runs_dir) -> pd.DataFrame:
    """Every result.json, read directly, with the per-step scores of scores.jsonl."""
    rows = []
    for path in sorted(runs_dir.rglob("result.json")):
        result = json.loads(path.read_text())
        scores = [json.loads(line) for line in (path.parent / "scores.jsonl").read_text().splitlines()]
        rows.append({"task": result["task"], "variant": result["data_variant"], "agent": result["agent"],
                     "model": expected_model(result), "seed": result["seed"], "success": float(result["success"]),
                     "improvement": result["improvement"] if result["score"] is not None else np.nan,
                     "tokens": result["total_tokens"], "wall": result["wall_time_s"], "demo": result["demo"],
                     "best_success": float(any(s["success"] for s in scores))})
    return pd.DataFrame(rows)


# what each plot drew (its name → the figure's artists as data), recorded as the report saves it
DRAWN: dict[str, list[dict]] = {}


def _drawn(figure) -> list[dict]:
    """Per axes: the image arrays, bar heights, lines and scatter points the figure holds."""
    from matplotlib.container import BarContainer

    return [{"title": axis.get_title(), "images": [np.asarray(image.get_array(), float) for image in axis.images],
             "bars": [(bars.get_label(), [bar.get_height() for bar in bars]) for bars in axis.containers
                      if isinstance(bars, BarContainer)],
             "lines": [(line.get_label(), np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float))
                       for line in axis.get_lines() if not line.get_label().startswith("_")],
             "points": [(c.get_label(), np.asarray(c.get_offsets(), float)) for c in axis.collections
                        if not c.get_label().startswith("_")],
             "texts": [text.get_text() for text in axis.texts],
             "xticks": [tick.get_text() for tick in axis.get_xticklabels()],
             "yticks": [tick.get_text() for tick in axis.get_yticklabels()]}
            for axis in figure.axes if axis.get_label() != "<colorbar>"]


@pytest.fixture(scope="session")
def report(runs_dir, tmp_path_factory) -> Path:
    from unittest import mock

    from matplotlib.figure import Figure

    out = tmp_path_factory.mktemp("report")
    save = Figure.savefig

    def recording_savefig(figure, path, *args, **kwargs):
        DRAWN[Path(path).stem] = _drawn(figure)
        return save(figure, path, *args, **kwargs)

    with mock.patch.object(Figure, "savefig", recording_savefig):
        code, stdout, stderr = mlab("report", runs_dir, "-o", out, "--compare", "agent:research,agent:react")
    assert code == 0, stderr
    assert f"report written to {out / 'report.md'}" in stdout
    return out


def bootstrap(values, seed=0, resamples=2000):
    """The documented interval: percentile bootstrap of the mean, its own generator per interval."""
    data = np.asarray([v for v in values if not np.isnan(v)], dtype=float)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    return tuple(np.percentile(means, [2.5, 97.5]))


def test_every_output_is_written(report):
    names = {p.name for p in report.iterdir()}
    for table in ("per_task", "over_tasks", "efficiency", "failures", "comparison", "best_vs_last"):
        assert {f"{table}.csv", f"{table}.tex"} <= names
    for plot in ("success_heatmap", "improvement_bars", "anytime", "tokens_vs_success"):
        data = (report / f"{plot}.png").read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    text = (report / "report.md").read_text()
    for plot in ("success_heatmap", "improvement_bars", "anytime", "tokens_vs_success"):
        assert f"]({plot}.png)" in text
    assert "\\begin{tabular}" in (report / "per_task.tex").read_text()


def test_success_rate_and_improvement_per_task(report, results):
    table = pd.read_csv(report / "per_task.csv")
    assert len(table) == results.groupby(["variant", "task", "agent", "model"]).ngroups
    for _, row in table.iterrows():
        runs = results[(results.variant == row.data_variant) & (results.task == row.task)
                       & (results.agent == row.agent) & (results.model == row.model)]
        assert row.runs == len(runs)
        assert row.success_rate == pytest.approx(runs.success.mean())
        valid = runs.improvement.dropna()
        assert row.valid_submissions == len(valid)
        if len(valid):
            assert row.avg_improvement == pytest.approx(valid.mean())
            assert (row.avg_improvement_low, row.avg_improvement_high) == pytest.approx(bootstrap(valid))
        else:
            assert np.isnan(row.avg_improvement)
        assert (row.success_rate_low, row.success_rate_high) == pytest.approx(bootstrap(runs.success))


def test_the_grid_cells_hold_what_the_scenarios_made(report):
    table = pd.read_csv(report / "per_task.csv").set_index(["data_variant", "agent", "model"])
    research = table.loc[("lite", "research", "mlab/scripted")]
    react = table.loc[("lite", "react", "mlab/scripted")]
    # research: 3 grid runs (2 successes) and 6 failure scenarios; react: 1 success of 3
    assert (research.runs, react.runs) == (9, 3)
    assert research.success_rate == pytest.approx(2 / 9)
    assert react.success_rate == pytest.approx(1 / 3)
    assert table.loc[("full", "research", "mlab/scripted")].success_rate == 1.0


def test_average_over_tasks_is_the_mean_of_task_rates(report, results):
    table = pd.read_csv(report / "over_tasks.csv")
    for _, row in table.iterrows():
        runs = results[(results.variant == row.data_variant) & (results.agent == row.agent)
                       & (results.model == row.model)]
        rates = runs.groupby("task").success.mean()
        assert row.tasks == len(rates) and row.success_rate == pytest.approx(rates.mean())
        assert row.success_rate_low <= row.success_rate <= row.success_rate_high


def test_efficiency_per_run(report, results):
    table = pd.read_csv(report / "efficiency.csv")
    for _, row in table.iterrows():
        runs = results[(results.variant == row.data_variant) & (results.agent == row.agent)
                       & (results.model == row.model)]
        assert row.total_tokens == pytest.approx(runs.tokens.mean())
        assert row.wall_time_s == pytest.approx(runs.wall.mean())
        assert (row.total_tokens_low, row.total_tokens_high) == pytest.approx(bootstrap(runs.tokens.astype(float)))


def test_paired_comparison_of_two_agents(report, results):
    table = pd.read_csv(report / "comparison.csv")
    key = ["variant", "task", "seed", "model"]
    research = results[results.agent == "research"].groupby(key)[["success", "improvement"]].mean()
    react = results[results.agent == "react"].groupby(key)[["success", "improvement"]].mean()
    pairs = research.merge(react, left_index=True, right_index=True, suffixes=("_a", "_b"))
    assert len(pairs) == 3  # seeds 0, 1, 2 of the grid
    overall = table[table.task == "all tasks"].iloc[0]
    assert overall.pairs == 3
    difference = pairs.success_a - pairs.success_b
    assert overall.success_difference == pytest.approx(difference.mean())
    assert (overall.success_difference_low, overall.success_difference_high) == pytest.approx(bootstrap(difference))
    both = pairs.dropna(subset=["improvement_a", "improvement_b"])
    assert overall.improvement_pairs == len(both)
    assert overall.improvement_difference == pytest.approx((both.improvement_a - both.improvement_b).mean())
    text = (report / "report.md").read_text()
    assert "Paired comparison: agent research − agent react" in text and "3 pairs" in text


def test_failure_counts_per_agent_and_model(report):
    table = pd.read_csv(report / "failures.csv").set_index(["data_variant", "agent", "model"])
    research = table.loc[("lite", "research", "mlab/scripted")]
    assert research.unsuccessful == 7
    assert research["small improvement"] == 2  # research-1, claim
    assert research["no submission"] == 5  # format, steps-limit, tokens-limit, crash, timeout
    assert research["limit reached"] == 2 and research["script failure"] == 2
    assert research["response format error"] == 1 and research["hallucinated claim"] == 1
    assert research["runs with hallucinated claims (any outcome)"] == 2  # research-2 succeeded but claimed
    assert table.loc[("lite", "research", "nosuchprovider/model-x")]["model API failure"] == 1


def test_best_step_versus_last_step(report, results):
    table = pd.read_csv(report / "best_vs_last.csv")
    for _, row in table.iterrows():
        runs = results[(results.variant == row.data_variant) & (results.agent == row.agent)
                       & (results.model == row.model)]
        assert row.last_step_success == pytest.approx(runs.success.mean())
        assert row.best_step_success == pytest.approx(runs.best_success.mean())


def test_variants_are_never_mixed_and_the_report_says_so(report):
    text = (report / "report.md").read_text()
    assert "Data variants: full (1 runs), lite (" in text and "never averaged together" in text
    for name in ("per_task", "over_tasks", "efficiency", "failures"):
        assert set(pd.read_csv(report / f"{name}.csv").data_variant) == {"full", "lite"}


def test_demonstrations_are_labelled(report):
    text = (report / "report.md").read_text()
    assert "demonstrations, not agent results" in text
    assert "| lite | tiny | research | mlab/demo (demonstration) |" in text
    assert "mlab/demo (demonstration)" in pd.read_csv(report / "over_tasks.csv").model.tolist()
    assert "mlab/demo (demonstration)" in (report / "over_tasks.tex").read_text()


def test_the_report_is_the_same_every_time(runs_dir, report, tmp_path):
    code, _, stderr = mlab("report", runs_dir, "-o", tmp_path, "--compare", "agent:research,agent:react")
    assert code == 0, stderr
    for name in ("per_task.csv", "over_tasks.csv", "efficiency.csv", "comparison.csv", "report.md"):
        assert (tmp_path / name).read_text() == (report / name).read_text().replace(str(report), str(tmp_path))


def test_comparing_two_models(runs_dir, tmp_path):
    code, _, stderr = mlab("report", runs_dir, "-o", tmp_path, "--compare", "model:mlab/scripted,model:mlab/demo")
    assert code == 0, stderr
    overall = pd.read_csv(tmp_path / "comparison.csv").query("task == 'all tasks' and data_variant == 'lite'")
    assert overall.pairs.tolist() == [1]  # the demo run pairs with research-0 (same task, seed and agent)


def test_comparing_one_agent_with_several(runs_dir, report, tmp_path):
    """An experiment of several agents (linear-vs-tree) is read as the first against each other one."""
    code, _, stderr = mlab("report", runs_dir, "-o", tmp_path, "--compare",
                           "agent:research,agent:react,agent:autogpt-style")
    assert code == 0, stderr
    # the first pair is the table a two-sided --compare writes, under the same name
    assert (tmp_path / "comparison.csv").read_text() == (report / "comparison.csv").read_text()
    second = pd.read_csv(tmp_path / "comparison_2.csv")  # autogpt-style ran with another seed: no pair
    assert {"success_a", "success_b", "success_difference"} <= set(second.columns) and second.empty
    text = (tmp_path / "report.md").read_text()
    assert "0 pairs (same data variant, task, seed and model)" in text
    assert "## Paired comparison: agent research − agent react" in text
    assert "## Paired comparison: agent research − agent autogpt-style" in text


@pytest.mark.parametrize("argument, message", [
    ("agent:research", "--compare takes FACTOR:A,FACTOR:B"),
    ("agent:research,agent:react,agent:research", "got 'research' more than once"),
    ("team:a,team:b", "--compare takes FACTOR:A,FACTOR:B"),
    ("agent:research,model:mlab/demo", "compare like with like"),
    ("agent:research,agent:nobody", "no runs with agent 'nobody'; the runs have agents: autogpt-style, react, research"),
])
def test_bad_comparisons_are_explained(runs_dir, tmp_path, argument, message):
    code, _, stderr = mlab("report", runs_dir, "-o", tmp_path, "--compare", argument)
    assert code == 2 and message in stderr and "Traceback" not in stderr


def test_a_folder_without_runs_is_refused(tmp_path):
    code, _, stderr = mlab("report", tmp_path)
    assert code == 2 and "no run folders" in stderr
    code, _, stderr = mlab("report", tmp_path / "missing")
    assert code == 2 and "is not a folder" in stderr


def test_a_group_without_valid_submissions_is_not_a_zero_bar(report):
    text = (report / "report.md").read_text()
    assert ("No valid submission, so no average improvement (marked \"no valid submission\" in the plot, "
            "not a 0% bar): tiny · research · nosuchprovider/model-x") in text


def test_runs_sharing_a_build_read_its_task_once(runs_dir, monkeypatch):
    from ruamel.yaml import YAML

    from mlab.reports import runs as loaded
    from mlab.reports.eval import evaluate_runs

    parsed = []
    real = YAML.load
    monkeypatch.setattr(YAML, "load", lambda self, text: parsed.append(1) or real(self, text))
    monkeypatch.setattr(loaded, "BUILD_DOCUMENTS", {})
    runs = loaded.load_runs([runs_dir])
    evaluate_runs(runs)
    assert len(runs) > 10 and len(parsed) == len({run.build_key for run in runs}) < len(runs)



def _label(row) -> str:
    return f"{row.agent} · {row.model}"


def _panels(name: str) -> dict[str, dict]:
    """A plot's panels by the data variant their title names."""
    return {axis["title"].rpartition("data ")[2]: axis for axis in DRAWN[name] if "data " in axis["title"]}


def test_the_heatmap_draws_each_groups_success_rate_per_task(report, results):
    panels = _panels("success_heatmap")
    assert set(panels) == set(results.variant)
    for variant, axis in panels.items():
        (grid,) = axis["images"]
        groups = [label.replace("\n", " · ") for label in axis["xticks"]]
        part = results[results.variant == variant]
        assert axis["yticks"] == sorted(part.task.unique()) and groups == sorted(results.apply(_label, axis=1).unique())
        for i, task in enumerate(axis["yticks"]):
            for j, group in enumerate(groups):
                runs = part[(part.task == task) & (part.apply(_label, axis=1) == group)]
                assert (np.isnan(grid[i, j]) if runs.empty else grid[i, j] == pytest.approx(runs.success.mean())), \
                    (variant, task, group)
    assert any(0 < value < 1 for axis in panels.values() for value in axis["images"][0].ravel() if value == value)


def test_the_bars_draw_each_groups_average_improvement(report, results):
    over = pd.read_csv(report / "over_tasks.csv")
    panels = _panels("improvement_bars")
    assert set(panels) == set(results.variant)
    for variant, axis in panels.items():
        part = results[results.variant == variant]
        tasks = sorted(part.task.unique()) + ["all tasks"]
        assert axis["xticks"] == tasks
        for group, heights in axis["bars"]:
            agent, model = group.split(" · ", 1)
            expected = []
            for task in tasks[:-1]:  # the mean over valid submissions; no bar (0) without one
                valid = part[(part.task == task) & (part.agent == agent) & (part.model == model)].improvement.dropna()
                expected.append(100 * valid.mean() if len(valid) else 0.0)
            row = over[(over.data_variant == variant) & (over.agent == agent) & (over.model == model)]
            expected.append(0.0 if row.empty or np.isnan(row.avg_improvement.iloc[0]) else 100 * row.avg_improvement.iloc[0])
            assert heights == pytest.approx(expected), (variant, group)
    assert any(abs(h) > 1 for axis in panels.values() for _, heights in axis["bars"] for h in heights)


def test_the_scatter_draws_each_runs_tokens_and_outcome(report, results):
    (axis,) = DRAWN["tokens_vs_success"]
    several = results.variant.nunique() > 1
    drawn = {label: points for label, points in axis["points"]}
    expected = results.assign(label=results.apply(_label, axis=1) + (" · " + results.variant if several else ""))
    assert set(drawn) == set(expected.label)
    for label, points in drawn.items():
        runs = expected[expected.label == label]
        assert sorted(points[:, 0]) == sorted(runs.tokens.astype(float)), label
        by_tokens = sorted(zip(points[:, 0], points[:, 1]))
        for (tokens, y), success in zip(by_tokens, runs.sort_values("tokens").success):
            assert abs(y - success) <= 0.12, (label, tokens)
    assert len({round(y) for points in drawn.values() for y in points[:, 1]}) == 2  # both outcomes drawn


def test_the_anytime_curves_end_at_each_groups_best_step_success(report, results):
    axes = DRAWN["anytime"]
    success_by_step = axes[3]  # the second row: runs successful so far; first column: against step
    expected = results.assign(label=results.apply(_label, axis=1) + " · " + results.variant)
    assert {label for label, _, _ in success_by_step["lines"]} == set(expected.label)
    for label, steps, share in success_by_step["lines"]:
        runs = expected[expected.label == label]
        assert share[-1] == pytest.approx(100 * runs.best_success.mean()), label
        assert steps[0] == 0 and np.all(np.diff(share) >= 0), label  # so far: never decreasing


@pytest.mark.parametrize("runs", [1, 7, 1000, 5001])
def test_intervals_drawn_in_blocks_are_the_bootstrap_drawn_at_once(runs):
    """Many runs are resampled a block at a time (flat memory); the interval a reader gets is still
    the percentile bootstrap of all `resamples` draws from the report's seed, to the last digit."""
    from mlab.reports.stats import LEVEL, RESAMPLES, bootstrap_ci, stratified_bootstrap_ci

    values = np.random.default_rng(3).normal(size=runs)
    draws = np.random.default_rng(0).integers(0, runs, size=(RESAMPLES, runs))
    expected = np.percentile(values[draws].mean(axis=1), [50 * (1 - LEVEL), 100 - 50 * (1 - LEVEL)])
    assert bootstrap_ci(values, seed=0) == tuple(float(x) for x in expected)
    groups = [values, values[: max(1, runs // 3)]]
    rng = np.random.default_rng(0)
    per_group = np.stack([g[rng.integers(0, g.size, size=(RESAMPLES, g.size))].mean(axis=1) for g in groups])
    expected = np.percentile(per_group.mean(axis=0), [50 * (1 - LEVEL), 100 - 50 * (1 - LEVEL)])
    assert stratified_bootstrap_ci(groups, seed=0) == tuple(float(x) for x in expected)
