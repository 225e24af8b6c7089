"""A declared validation split (`validation 0.1`): training rows the harness holds out, their
features public as validation.csv and their answers private, and Validate Submission scoring the
agent's validation_submission.csv on them, never reading the test answers."""
from __future__ import annotations

import pandas as pd
import pytest

from mlab.build import resolve_task
from mlab.data.prepare import prepare_data, preparation_key
from mlab.errors import DataError
from mlab.scoring.validation import install

from test_data_preparation import make_task, prepared_frames

ROWS = "Id,x,y\n" + "".join(f"{i},{i % 13},{(i * 7) % 50}\n" for i in range(200))
DATA = """data lite { from csv "rows.csv" split random 0.2 seed 42 validation 0.25
    id "Id" answers ["y"] public ["train.csv", "test.csv"] private ["answers.csv"] }"""


@pytest.fixture
def source(tmp_path, mlab_env):
    return make_task(tmp_path / "t", DATA, {"rows.csv": ROWS})


def test_the_validation_rows_are_held_out_of_the_training_rows(source):
    _, frames = prepared_frames(source)
    train, test = frames["public/train.csv"], frames["public/test.csv"]
    shown, answers = frames["public/validation.csv"], frames["private/validation.csv"]
    assert (len(train), len(test), len(shown), len(answers)) == (120, 40, 40, 40)
    assert not set(train["Id"]) & set(shown["Id"]) and not set(test["Id"]) & set(shown["Id"])
    assert sorted(set(train["Id"]) | set(test["Id"]) | set(shown["Id"])) == list(range(200))
    assert list(shown.columns) == ["Id", "x"] and list(answers.columns) == ["Id", "y"]
    assert list(shown["Id"]) == list(answers["Id"])
    rows = pd.read_csv(source.parent / "rows.csv")
    expected = rows.drop(rows.sample(frac=0.2, random_state=42).index).sample(frac=0.25, random_state=42)
    assert list(shown["Id"]) == list(expected["Id"]) and list(answers["y"]) == list(expected["y"])


def test_the_split_is_the_same_each_time(source, tmp_path):
    task = resolve_task(str(source))
    first = prepare_data(task, "lite", cache_dir=tmp_path / "a")
    second = prepare_data(task, "lite", cache_dir=tmp_path / "b")
    for rel in ("public/train.csv", "public/validation.csv", "private/validation.csv"):
        assert (first.folder / rel).read_bytes() == (second.folder / rel).read_bytes()


def test_a_variant_without_validation_is_prepared_as_before(tmp_path, mlab_env):
    plain = make_task(tmp_path / "p", DATA.replace(" validation 0.25", ""), {"rows.csv": ROWS})
    task = resolve_task(str(plain))
    assert task.variant("lite").validation is None
    prepared, frames = prepared_frames(plain)
    assert len(frames["public/train.csv"]) == 160 and not (prepared.public / "validation.csv").exists()
    held = resolve_task(str(make_task(tmp_path / "v", DATA, {"rows.csv": ROWS})))
    assert preparation_key(task, "lite") != preparation_key(held, "lite")


def test_a_share_that_holds_out_no_row_is_a_clear_error(tmp_path, mlab_env):
    few = "Id,x,y\n" + "".join(f"{i},{i},{i}\n" for i in range(5))
    source = make_task(tmp_path / "t", DATA.replace("0.25", "0.01"), {"rows.csv": few})
    with pytest.raises(DataError, match="holds out 0 rows"):
        prepare_data(resolve_task(str(source)), "lite")


# -- Validate Submission on the validation rows ----------------------------------------

@pytest.fixture
def run(source, tmp_path):
    from mlab.run.folder import Run

    task = resolve_task(str(source))
    made = Run.create(task, task.build.agent("research"), tmp_path / "runs")
    install(made)
    yield made
    made.close()


def write(run, name: str, ids, values) -> None:
    lines = ["Id,y", *(f"{i},{v}" for i, v in zip(ids, values))]
    (run.workspace.root / name).write_text("\n".join(lines) + "\n")


def write_test_submission(run) -> None:
    ids = list(pd.read_csv(run.workspace.root / "test.csv")["Id"])
    write(run, "submission.csv", ids, [1] * len(ids))


def test_the_validation_submission_is_scored_on_the_validation_rows(run):
    write_test_submission(run)
    shown = pd.read_csv(run.workspace.root / "validation.csv")
    answers = pd.read_csv(run.private_dir / "validation.csv")
    predictions = [(i % 11) * 2.0 for i in shown["Id"]]
    write(run, "validation_submission.csv", shown["Id"], predictions)
    expected = sum(abs(p - a) for p, a in zip(predictions, answers["y"])) / len(answers)
    observation = run.step("Validate Submission", {})
    assert observation.status == "ok"
    assert observation.text.endswith(f"validation_submission.csv: mae {expected:.4g} on the 40 validation rows "
                                     "(the test answers are never used).")
    assert "submission.csv is valid: 40 rows" in observation.text


def test_without_a_validation_submission_it_says_how_to_get_a_score(run):
    write_test_submission(run)
    observation = run.step("Validate Submission", {})
    assert observation.status == "ok"
    assert "No validation score: write validation_submission.csv" in observation.text
    assert "each of the 40 rows of validation.csv" in observation.text


def test_a_bad_validation_submission_is_reported(run):
    write_test_submission(run)
    shown = list(pd.read_csv(run.workspace.root / "validation.csv")["Id"])
    write(run, "validation_submission.csv", shown[:-2] + [999], ["1"] * (len(shown) - 2) + ["cheap"])
    observation = run.step("Validate Submission", {})
    assert observation.status == "error"
    assert "Validation not scored: validation_submission.csv" in observation.text
    assert "validation ids" in observation.text


def test_the_test_answers_are_never_read(run):
    write_test_submission(run)
    (run.private_dir / "answers.csv").write_text("garbage\x00,\n")
    shown = pd.read_csv(run.workspace.root / "validation.csv")
    write(run, "validation_submission.csv", shown["Id"], [0] * len(shown))
    observation = run.step("Validate Submission", {})
    assert observation.status == "ok" and "mae" in observation.text
