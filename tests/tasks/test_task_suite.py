"""The thirteen tasks: each compiles, declares what the benchmark needs, and has its recorded baseline."""
from __future__ import annotations

import json

import pytest
from task_helpers import REPO, TASKS, TIMED

from mlab.cli import main as mlab_main
from mlabc.cli import main as mlabc_main

# category and metric of each task, as in the MLAgentBench paper (direction by metric)
EXPECTED = {
    "cifar10": ("canonical", "accuracy"), "imdb": ("canonical", "accuracy"), "ogbn-arxiv": ("canonical", "accuracy"),
    "house-price": ("classic-kaggle", "mae"), "spaceship-titanic": ("classic-kaggle", "accuracy"),
    "parkinsons-disease": ("recent-kaggle", "smape1"), "fathomnet": ("recent-kaggle", "fathomnet"),
    "feedback": ("recent-kaggle", "mcrmse"), "identify-contrails": ("recent-kaggle", "dice"),
    "clrs": ("research", "accuracy"), "babylm": ("research", "perplexity"),
    "llama-inference": ("code-improvement", "runtime"), "vectorization": ("code-improvement", "runtime"),
}


def test_the_suite_is_the_thirteen_tasks_of_the_paper():
    found = sorted(p.stem for p in (REPO / "tasks").glob("*.mlab") if p.stem != "experiments")
    assert found == sorted(TASKS) == sorted(EXPECTED)


@pytest.mark.parametrize("name", TASKS)
def test_every_task_checks_clean(name, capsys):
    assert mlabc_main(["check", str(REPO / "tasks" / f"{name}.mlab")]) == 0
    assert capsys.readouterr().out.startswith("ok")


@pytest.mark.parametrize("name", TASKS)
def test_every_task_declares_both_variants_its_category_and_metric(name, task_of):
    view = task_of(name).view
    assert set(view.data) == {"lite", "full"}
    assert (view.category, view.metric.name) == EXPECTED[name]
    assert view.success.improvement == pytest.approx(0.10)
    lite = view.data["lite"]
    assert lite.limits.steps <= view.limits.steps  # lite runs are shorter
    assert view.submission.file in view.problem


def test_recorded_baselines_cover_the_untimed_tasks_only():
    recorded = json.loads((REPO / "tasks" / "baselines.json").read_text())["baselines"]
    assert sorted(recorded) == sorted(set(TASKS) - set(TIMED))
    for name, variants in recorded.items():
        entry = variants["lite"]
        assert entry["metric"] == EXPECTED[name][1]
        assert {"value", "seed", "code_hash", "mlab_version", "tolerance", "script"} <= set(entry)


def test_full_variants_of_kaggle_tasks_that_are_not_one_table_name_their_prepare_function(task_of):
    for name in ("parkinsons-disease", "fathomnet", "identify-contrails"):
        full = task_of(name).variant("full")
        assert full.source.kind == "kaggle"
        assert (full.prepare.file, full.prepare.function) == (f"{name}/make_data.py", "prepare_kaggle")


def test_the_list_command_shows_every_task(capsys):
    assert mlab_main(["list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in TASKS)


def test_the_task_table_in_the_docs_matches_the_recorded_baselines():
    recorded = json.loads((REPO / "tasks" / "baselines.json").read_text())["baselines"]
    rows = [line.split("|")[1:-1] for line in (REPO / "docs" / "tasks.md").read_text().splitlines()
            if line.startswith("| ") and line.split("|")[1].strip() in EXPECTED]
    assert sorted(r[0].strip() for r in rows) == sorted(TASKS)
    for name, category, metric, _direction, _data, baseline, _hardware in (map(str.strip, r) for r in rows):
        assert (category, metric) == EXPECTED[name]
        if name in TIMED:
            assert baseline == "timed side by side"
        else:
            value = recorded[name]["lite"]["value"]
            assert float(baseline) == pytest.approx(value, rel=5e-3), f"{name}: docs {baseline}, recorded {value}"
