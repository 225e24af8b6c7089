"""The Describe Table action (describe_table): a workspace table profiled without a helper script."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from mlab.actions.tables import describe_table
from mlab.observation import ActionFailed

PARAMS = {"max_rows": 100000, "max_columns": 60}


def _describe(run, name: str, **params):
    return describe_table(SimpleNamespace(workspace=run.workspace), {"file_name": name}, {**PARAMS, **params}).text


def test_each_column_gets_its_type_missing_distinct_and_summary(new_run):
    run = new_run()
    run.step("Write File", {"file_name": "t.csv", "content": "id,price,city\n1,10,Oslo\n2,,Oslo\n3,30,Rome\n4,40,\n"})
    lines = _describe(run, "t.csv").splitlines()
    assert lines[0] == "t.csv: 4 rows, 3 columns"
    assert lines[2].split() == ["column", "type", "missing", "distinct", "summary"]
    price = lines[4].split(None, 4)
    assert price[:4] == ["price", "float", "1", "3"]
    assert price[4] == "min 10, mean 26.67, max 40, std 15.28"
    assert lines[5].split(None, 4)[1:4] == ["text", "1", "2"] and lines[5].endswith("top: Oslo (2), Rome (1)")


def test_the_bundled_training_table_and_the_bounds(new_run):
    run = new_run()
    text = _describe(run, "train.csv", max_rows=50, max_columns=3)
    assert text.startswith("train.csv: more than 50 rows (described: the first 50), ")
    assert "... and " in text and " more columns: " in text
    assert len(text.splitlines()) == 3 + 3 + 1


def test_what_is_not_a_table_is_refused_in_one_line(new_run):
    run = new_run()
    run.step("Write File", {"file_name": "notes.md", "content": "# notes\n"})
    with pytest.raises(ActionFailed, match=r"notes.md is not a table this action reads \(CSV, TSV or Parquet"):
        _describe(run, "notes.md")


def test_the_std_action_set_core_data_offers_it():
    from mlabc.api import check_paths
    from mlabc.resources import std_dir

    compiled = check_paths([str(std_dir() / "actions.mlab")])
    assert compiled.ok
    (core_data,) = [d for _, d in compiled.program.decls() if d.name.value == "core-data"]
    assert core_data.parent.value == "core"
