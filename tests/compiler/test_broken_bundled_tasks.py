"""Each mistake class of issue 27, made in a copy of a bundled task, is caught by `mlabc check`
before any script runs, located in the task's own file, with its own code and only it."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mlabc.api import check_paths

TASKS = Path(__file__).resolve().parents[2] / "tasks"


def _copy(tmp_path: Path, task: str) -> Path:
    shutil.copytree(TASKS / task, tmp_path / task)
    shutil.copy(TASKS / f"{task}.mlab", tmp_path / f"{task}.mlab")
    return tmp_path / f"{task}.mlab"


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def _reversed_direction(tmp_path):
    source = _copy(tmp_path, "house-price")
    _replace(source, 'metric     mae on "SalePrice" lower_is_better', 'metric     rmsle on "SalePrice" higher_is_better')
    return source


def _baseline_as_percentage(tmp_path):
    source = _copy(tmp_path, "spaceship-titanic")
    _replace(source, 'baseline   run "train.py"', 'baseline   72 because "the starter\'s accuracy, in percent"')
    return source


def _problem_names_another_column(tmp_path):
    source = _copy(tmp_path, "spaceship-titanic")
    _replace(source, "columns PassengerId and Transported", "columns PassengerId and Label")
    return source


def _demo_action_of_another_agent(tmp_path):
    source = _copy(tmp_path, "spaceship-titanic")
    demo = tmp_path / "spaceship-titanic" / "demo.json"
    document = json.loads(demo.read_text())
    document["steps"][0]["action"] = "Peek File"
    demo.write_text(json.dumps(document))
    return source


def _stray_checkpoint(tmp_path):
    source = _copy(tmp_path, "spaceship-titanic")
    with (tmp_path / "spaceship-titanic" / "env" / "model.ckpt").open("wb") as file:
        file.truncate(110 * 10**6)  # sparse: no disk blocks
    return source


def _repeated_id(tmp_path):
    source = _copy(tmp_path, "house-price")
    table = tmp_path / "house-price" / "lite" / "houses.csv"
    lines = table.read_text().splitlines(keepends=True)
    lines[2] = "1," + lines[2].split(",", 1)[1]  # the second house gets the first one's id
    table.write_text("".join(lines))
    return source


def _constraint_on_a_misspelt_column(tmp_path):
    source = _copy(tmp_path, "fathomnet")
    _replace(source, 'column "categories" ranking', 'column "category" ranking')
    return source


def _vocabulary_not_read_only(tmp_path):
    source = _copy(tmp_path, "fathomnet")
    _replace(source, '"test.csv", "category_key.csv", "*.npy"]', '"test.csv", "*.npy"]')
    return source


@pytest.mark.parametrize("make, code, words", [
    (_constraint_on_a_misspelt_column, "E516", "constraint on column `category`, which the submission does not"),
    (_vocabulary_not_read_only, "E519", "vocabulary file 'category_key.csv' is not read-only"),
    (_reversed_direction, "E409", "metric `rmsle` is lower_is_better, not higher_is_better"),
    (_baseline_as_percentage, "E410", "baseline 72 is outside the range of metric `accuracy` (from 0 to 1)"),
    (_problem_names_another_column, "E513", "does not name submission column `Transported`"),
    (_demo_action_of_another_agent, "E514", "step 1 uses the action 'Peek File', which agent `research`"),
    (_stray_checkpoint, "E515", "starter file 'model.ckpt' is 110 MB, past the 20 MB"),
    (_repeated_id, "E512", "id column 'Id' of 'house-price/lite/houses.csv' repeats '1' on lines 2 and 3"),
], ids=["constrained-column", "vocabulary", "direction", "range", "problem-text", "demonstration", "starter-size",
        "ids"])
def test_the_mistake_is_caught_at_its_place_in_the_task(tmp_path, make, code, words):
    source = make(tmp_path)
    diagnostics = check_paths([str(source)]).diagnostics
    assert {d.code for d in diagnostics} == {code}, [str(d) for d in diagnostics]
    assert any(words in d.message for d in diagnostics), [d.message for d in diagnostics]
    assert all(Path(d.span.path).name == source.name and d.span.line > 0 for d in diagnostics)
