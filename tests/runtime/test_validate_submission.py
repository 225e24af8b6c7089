"""The Validate Submission action: the scorer's format check against the public test ids, never
a score and never anything from the run's private answers."""
from __future__ import annotations

import os

import pandas as pd
import pytest

from mlab.scoring.validation import install


@pytest.fixture
def run(new_run):
    made = new_run()
    install(made)
    return made


def public_ids(run) -> list[str]:
    return list(pd.read_csv(run.workspace.root / "test.csv", dtype=str)["Id"])


def write_submission(run, rows: list[tuple[str, str]], header: str = "Id,SalePrice") -> None:
    lines = [header, *(f"{i},{v}" for i, v in rows)]
    (run.workspace.root / "submission.csv").write_text("\n".join(lines) + "\n")


def validate(run):
    return run.step("Validate Submission", {})


def test_a_valid_submission_is_reported_with_its_rows_and_columns(run):
    ids = public_ids(run)
    write_submission(run, [(i, "180000.5") for i in ids])
    observation = validate(run)
    assert observation.status == "ok"
    assert observation.text == (f"submission.csv is valid: {len(ids):,} rows, columns Id, SalePrice; "
                                f"ids match the {len(ids):,} test ids. Nothing was scored.")


def test_a_missing_submission_says_what_to_write(run):
    observation = validate(run)
    assert observation.status == "error"
    assert "no submission: submission.csv was not written" in observation.text
    assert "`Id,SalePrice`" in observation.text


def test_wrong_columns_are_named_with_a_hint(run):
    write_submission(run, [(i, "1") for i in public_ids(run)], header="Id,saleprice")
    text = validate(run).text
    assert "submission.csv lacks column(s) ['SalePrice']" in text
    assert "did you mean `SalePrice` instead of `saleprice`" in text


@pytest.mark.parametrize("change, message", [
    (lambda ids: ids[:-3], "3 of the {n} test ids are missing"),
    (lambda ids: ids + ["999999"], "1 id(s) are not test ids (e.g. 999999)"),
    (lambda ids: ids + ids[:2], "2 id(s) appear more than once"),
])
def test_missing_extra_and_repeated_ids_are_reported(run, change, message):
    ids = public_ids(run)
    write_submission(run, [(i, "1") for i in change(list(ids))])
    observation = validate(run)
    assert observation.status == "error"
    assert message.format(n=len(ids)) in observation.text
    assert f"expected exactly one row for each of the {len(ids)} ids of the test set" in observation.text


def test_a_wrong_row_count_is_reported(run):
    ids = public_ids(run)
    write_submission(run, [(i, "1") for i in ids[: len(ids) // 2]])
    assert f"of the {len(ids)} test ids are missing" in validate(run).text


def test_empty_and_non_number_values_are_reported(run):
    ids = public_ids(run)
    values = ["", "cheap", "inf"] + ["1"] * (len(ids) - 3)
    write_submission(run, list(zip(ids, values)))
    text = validate(run).text
    assert "1 value(s) in `SalePrice` are empty or NaN" in text
    assert "1 value(s) in `SalePrice` are not numbers (e.g. 'cheap')" in text
    assert "1 value(s) in `SalePrice` are infinite" in text
    assert "Nothing was scored" in text


def test_a_linked_submission_is_refused(run):
    ids = public_ids(run)
    write_submission(run, [(i, "1") for i in ids])
    root = run.workspace.root
    os.rename(root / "submission.csv", root / "real.csv")
    os.symlink("real.csv", root / "submission.csv")
    observation = validate(run)
    assert observation.status == "error"
    assert "submission.csv is a symbolic link to real.csv" in observation.text


def test_the_observation_tells_nothing_of_the_answers(run):
    answers = pd.read_csv(run.private_dir / "answers.csv", dtype=str)
    ids = public_ids(run)
    texts = []
    write_submission(run, [(i, "1") for i in ids])
    texts.append(validate(run).text)
    write_submission(run, [(i, "x") for i in ids])
    texts.append(validate(run).text)
    write_submission(run, [(i, "1") for i in ids[:-1]])
    texts.append(validate(run).text)
    prices = {p for p in answers["SalePrice"] if len(p) > 3}
    for text in texts:
        assert not any(price in text for price in prices), text
        assert "answers" not in text and "private" not in text


def test_the_public_test_ids_come_from_the_harness_copy_not_the_workspace(run):
    ids = public_ids(run)
    (run.workspace.root / "test.csv").unlink()   # as an agent can (read-only data is a link to the cache)
    (run.workspace.root / "test.csv").write_text("Id\n1\n")
    write_submission(run, [(i, "1") for i in ids])
    assert validate(run).status == "ok"


def test_without_installing_the_action_says_it_is_not_available(new_run):
    observation = new_run().step("Validate Submission", {})
    assert observation.status == "error" and "not available in this run" in observation.text


def test_the_std_research_agents_show_the_action(house_task):
    for name in ("research", "research-retrieval", "react", "simple"):
        actions = house_task.build.agent(name).actions.actions
        shown = [a.name for a in actions if a.shown]
        assert "Validate Submission" in shown, name


@pytest.mark.parametrize("given", [None, "", {}])
def test_the_action_takes_no_input_however_it_is_called(run, given):
    observation = run.step("Validate Submission", given)
    assert "no submission: submission.csv was not written" in observation.text


@pytest.mark.parametrize("value, problem", [
    ("1e308", "1 value(s) in `SalePrice` are larger in magnitude than 1e+100 (e.g. '1e308')"),
    ("inf", "1 value(s) in `SalePrice` are infinite"),
    ("nan", "1 value(s) in `SalePrice` are empty or NaN"),
])
def test_validation_and_scoring_say_the_same_of_unscorable_numbers(run, value, problem):
    from mlab.failure import FailureMode
    from mlab.scoring.evaluate import evaluate

    ids = public_ids(run)
    write_submission(run, [(ids[0], value), *((i, "180000") for i in ids[1:])])
    observation = validate(run)
    assert observation.status == "error" and problem in observation.text
    result = evaluate(run)   # a stated result, never "could not be scored"
    assert result["failure_mode"] == FailureMode.SUBMISSION_FORMAT_ERROR
    assert result["score"] is None and problem in result["detail"]
    assert result["submission_problem"] == result["detail"]


def test_the_workspace_scorer_the_harbor_verifier_uses_states_an_overflowing_submission(run):
    from mlab.failure import FailureMode
    from mlab.scoring.score import score_workspace

    ids = public_ids(run)
    write_submission(run, [(i, "1e308") for i in ids])
    score = score_workspace(run.task, run.meta["data"]["variant"], run.workspace.root, run.private_dir)
    assert score.value is None and score.submitted
    assert score.failure_mode == FailureMode.SUBMISSION_FORMAT_ERROR
    assert f"{len(ids)} value(s) in `SalePrice` are larger in magnitude than 1e+100" in score.detail
