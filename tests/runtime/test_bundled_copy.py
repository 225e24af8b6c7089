"""A ./tasks folder beside an installed mlab: a copy of the bundled tasks (a checkout, or a
copied folder) compiles without clashing with the installed copy, and a local task shadows the
bundled one of its name.

Nothing is installed: the installed package's data is simulated by pointing mlabc.resources at a
copy of tasks/ (with the grammar and spec linked), as an installed wheel's `mlabc/` folder is.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mlabc import resources
from mlabc.api import check_paths, compile_paths
from mlab import build
from mlab.cli import list as list_cmd

from runtime_helpers import REPO

DEBRIS = shutil.ignore_patterns("__pycache__", "*.pyc")


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """An installed mlabc's data folder (site/mlabc/{tasks,grammars,spec}) that resources reads."""
    package = tmp_path / "site" / "mlabc"
    shutil.copytree(REPO / "tasks", package / "tasks", ignore=DEBRIS)
    for name in ("grammars", "spec"):
        (package / name).symlink_to(REPO / name)
    monkeypatch.setattr(resources, "_HERE", package)
    monkeypatch.setenv("MLAB_CACHE", str(tmp_path / "cache"))
    resources.data_dir.cache_clear()
    yield package / "tasks"
    resources.data_dir.cache_clear()


@pytest.fixture
def work(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def _clashes(compiled) -> list[str]:
    return [d.message for d in compiled.diagnostics if "declared twice" in d.message]


def test_a_copied_tasks_folder_checks_and_compiles_beside_the_installed_one(installed, work):
    shutil.copytree(REPO / "tasks", work / "tasks", ignore=DEBRIS)
    compiled = check_paths(None)  # mlabc check: ./tasks, with its std/ copy
    assert _clashes(compiled) == [] and compiled.ok
    sources = compiled.program.modules
    assert not [key for key in sources if Path(key).is_relative_to(installed)], \
        "the installed standard library was loaded beside the copy"
    compiled, manifest = compile_paths(["tasks/house-price.mlab"], work / "out")
    assert manifest is not None, _clashes(compiled)


def test_mlab_list_in_a_copy_of_the_bundled_tasks_lists_each_task_once(installed, work, capsys):
    shutil.copytree(REPO / "tasks", work / "tasks", ignore=DEBRIS)
    assert list_cmd.main(None) == 0
    listed = capsys.readouterr().out
    assert listed.count("\n  house-price ") == 1 and "research" in listed
    assert "requires numpy, pandas, torch==2.13.0" in listed.split("\n  cifar10 ")[1].splitlines()[0]
    assert all(Path(p).parent == work / "tasks" for p in map(str, build.task_sources()))


def test_a_local_task_shadows_the_bundled_task_of_its_name(installed, work, capsys):
    (work / "tasks").mkdir()
    # Another file name, the same task name: the declaration shadows the bundled house-price.mlab.
    text = (REPO / "tasks" / "house-price.mlab").read_text(encoding="utf-8")
    (work / "tasks" / "my-houses.mlab").write_text(
        text.replace('"Predict the sale price of houses"', '"My own house prices"'), encoding="utf-8")
    shutil.copytree(REPO / "tasks" / "house-price", work / "tasks" / "house-price", ignore=DEBRIS)
    sources = build.task_sources()
    assert work / "tasks" / "my-houses.mlab" in sources
    assert installed / "house-price.mlab" not in sources and installed / "imdb.mlab" in sources
    assert list_cmd.main(None) == 0
    assert "declared twice" not in capsys.readouterr().out
    task = build.resolve_task("house-price")
    assert task.view.title == "My own house prices"
    assert task.root == work / "tasks"
