"""Submission validation: a good file is aligned on the answers' ids, a bad one says what was expected."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlab.scoring import submission as submission_module
from mlab.scoring.metrics.tabular import score
from mlab.scoring.submission import AnswersError, SubmissionError, load_and_validate, load_answers

ANSWERS = "Id,SalePrice,Neighborhood\n1461,100000,A\n1462,200000,B\n1463,150000,C\n1464,,D\n"


@pytest.fixture
def answers(tmp_path) -> Path:
    path = tmp_path / "private" / "answers.csv"
    path.parent.mkdir()
    path.write_text(ANSWERS)
    return path


def write(tmp_path: Path, text: str | bytes, name: str = "submission.csv") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def rejected(path: Path, answers: Path, columns=("SalePrice",), metric: str | None = "mae",
             id_column: str = "Id") -> str:
    with pytest.raises(SubmissionError) as caught:
        load_and_validate(path, answers, id_column, list(columns), metric)
    return str(caught.value)


# --- good submissions ---------------------------------------------------------------

def test_a_good_submission_is_aligned_on_the_answers_ids(tmp_path, answers):
    path = write(tmp_path, "Id,SalePrice\n1463,150000\n1461,110000.5\n1464,7\n1462,190000\n")
    aligned = load_and_validate(path, answers, "Id", ["SalePrice"], "mae")
    assert list(aligned.columns) == ["Id", "SalePrice"]
    assert list(aligned["Id"]) == ["1461", "1462", "1463", "1464"]
    assert list(aligned["SalePrice"]) == [110000.5, 190000.0, 150000.0, 7.0]
    truth = load_answers(answers, "Id", ["SalePrice"], "mae")
    # id 1464 has no answer, so three rows are scored: |10000.5| + |10000| + 0
    assert score("mae", truth, aligned, ["SalePrice"]) == pytest.approx(20000.5 / 3)


def test_tolerated_spellings_of_a_good_submission(tmp_path, answers):
    # a byte-order mark, spaces around names and values, ids written as floats, an index column
    text = "\ufeff,Id , SalePrice\n0,1461.0, 1\n1,1462,2 \n2,1463,3e2\n3,1464,-4\n"
    path = write(tmp_path, text.encode("utf-8"))
    aligned = load_and_validate(path, answers, "Id", ["Id", "SalePrice"], "mae")
    assert list(aligned["SalePrice"]) == [1.0, 2.0, 300.0, -4.0]


def test_labels_are_kept_as_text(tmp_path, answers):
    path = write(tmp_path, "Id,Neighborhood\n1461,A\n1462, B\n1463,c\n1464,D\n")
    aligned = load_and_validate(path, answers, "Id", ["Neighborhood"], "accuracy")
    truth = load_answers(answers, "Id", ["Neighborhood"], "accuracy")
    assert list(aligned["Neighborhood"]) == ["A", "B", "c", "D"]
    assert score("accuracy", truth, aligned, ["Neighborhood"]) == 0.75


# --- the file itself ----------------------------------------------------------------

def test_missing_file(tmp_path, answers):
    message = rejected(tmp_path / "submission.csv", answers)
    assert message == ("no submission: submission.csv was not written; expected a CSV file whose "
                       "header line is `Id,SalePrice` with one row per test id")


def test_a_folder_is_not_a_submission(tmp_path, answers):
    (tmp_path / "submission.csv").mkdir()
    assert "submission.csv is a folder, not a file" in rejected(tmp_path / "submission.csv", answers)


def test_empty_file(tmp_path, answers):
    assert rejected(write(tmp_path, ""), answers).startswith("submission.csv is empty; expected a CSV file")
    assert rejected(write(tmp_path, "\n\n"), answers).startswith("submission.csv holds no header line")


def test_binary_file(tmp_path, answers):
    path = write(tmp_path, b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe\xfd")
    assert rejected(path, answers) == ("submission.csv is not a text file; expected a CSV file "
                                       "whose header line is `Id,SalePrice`")


def test_malformed_csv(tmp_path, answers):
    message = rejected(write(tmp_path, 'Id,SalePrice\n1461,"unterminated\n1462,3\n'), answers)
    assert message.startswith("submission.csv could not be read as CSV (")
    assert message.endswith("expected a CSV file whose header line is `Id,SalePrice`")


def test_a_huge_file_is_refused_before_reading(tmp_path, answers, monkeypatch):
    monkeypatch.setattr(submission_module, "MAX_SUBMISSION_BYTES", 2 * 2**20)
    path = write(tmp_path, "Id,SalePrice\n" + "1461,1\n" * 400_000)
    assert "submission.csv is 3 MB, over the 2 MB limit for a submission" in rejected(path, answers)


# --- columns ------------------------------------------------------------------------

def test_missing_column_names_the_expected_and_found_ones(tmp_path, answers):
    message = rejected(write(tmp_path, "Id,Target\n1461,1\n"), answers)
    assert message == ("submission.csv lacks column(s) ['SalePrice']: expected columns ['Id', 'SalePrice'], "
                       "found ['Id', 'Target']")


def test_the_declared_submission_columns_are_all_required(tmp_path, answers):
    # `submission "submission.csv" columns ["Id", "SalePrice", "Neighborhood"]`, `metric mae on "SalePrice"`
    declared = ["Id", "SalePrice", "Neighborhood"]
    path = write(tmp_path, "Id,SalePrice\n1461,1\n1462,2\n1463,3\n1464,4\n")
    with pytest.raises(SubmissionError) as caught:
        load_and_validate(path, answers, "Id", ["SalePrice"], "mae", declared=declared)
    assert str(caught.value) == ("submission.csv lacks column(s) ['Neighborhood']: expected columns "
                                 "['Id', 'SalePrice', 'Neighborhood'], found ['Id', 'SalePrice']")
    path = write(tmp_path, "Id,Neighborhood,SalePrice\n1461,x,1\n1462,x,2\n1463,x,3\n1464,x,4\n")
    aligned = load_and_validate(path, answers, "Id", ["SalePrice"], "mae", declared=declared)
    assert list(aligned["SalePrice"]) == [1.0, 2.0, 3.0, 4.0]


def test_column_hints(tmp_path, answers):
    assert rejected(write(tmp_path, "id,saleprice\n1461,1\n"), answers).endswith(
        "found ['id', 'saleprice'] (names must match exactly: did you mean `Id` instead of `id`, "
        "`SalePrice` instead of `saleprice`?)")
    assert rejected(write(tmp_path, "Id,SalesPrice\n1461,1\n"), answers).endswith(
        "(names must match exactly: did you mean `SalePrice` instead of `SalesPrice`?)")
    assert rejected(write(tmp_path, "Id;SalePrice\n1461;1\n"), answers).endswith(
        "found ['Id;SalePrice'] (separate columns with commas)")
    assert rejected(write(tmp_path, "1461,1\n1462,2\n"), answers).endswith(
        "found ['1461', '1'] (the first line should be the header, not data)")


# --- ids ----------------------------------------------------------------------------

def test_missing_ids_are_counted_with_examples(tmp_path, answers):
    message = rejected(write(tmp_path, "Id,SalePrice\n1461,1\n"), answers)
    assert message == ("submission.csv: 3 of the 4 test ids are missing (e.g. 1462, 1463, 1464); "
                       "expected exactly one row for each of the 4 ids of the test set")


def test_duplicate_ids(tmp_path, answers):
    path = write(tmp_path, "Id,SalePrice\n1461,1\n1462,2\n1463,3\n1464,4\n1462,5\n")
    assert rejected(path, answers).startswith("submission.csv: 1 id(s) appear more than once (e.g. 1462);")


def test_extra_ids(tmp_path, answers):
    rows = "".join(f"{i},1\n" for i in range(1461, 1472))
    message = rejected(write(tmp_path, "Id,SalePrice\n" + rows), answers)
    assert message.startswith("submission.csv: 7 id(s) are not test ids (e.g. 1465, 1466, 1467, 1468, 1469, ...)")


def test_empty_ids(tmp_path, answers):
    path = write(tmp_path, "Id,SalePrice\n1461,1\n1462,2\n1463,3\n1464,4\n,5\n")
    assert rejected(path, answers).startswith("submission.csv: 1 row(s) have no value in `Id`;")


def test_shifted_ids_report_both_missing_and_extra(tmp_path, answers):
    rows = "".join(f"{i},1\n" for i in range(1462, 1466))
    message = rejected(write(tmp_path, "Id,SalePrice\n" + rows), answers)
    assert "1 of the 4 test ids are missing (e.g. 1461)" in message
    assert "1 id(s) are not test ids (e.g. 1465)" in message


# --- values -------------------------------------------------------------------------

def test_empty_values_are_counted_per_column(tmp_path, answers):
    path = write(tmp_path, "Id,SalePrice\n1461,\n1462,NaN\n1463,3\n1464,4\n")
    assert rejected(path, answers) == ("submission.csv: 2 value(s) in `SalePrice` are empty or NaN; "
                                       "expected a finite number in every row of `SalePrice`")


def test_non_numeric_values_where_the_metric_needs_numbers(tmp_path, answers):
    path = write(tmp_path, 'Id,SalePrice\n1461,cheap\n1462,"1,000"\n1463,inf\n1464,4\n')
    assert rejected(path, answers) == (
        "submission.csv: 2 value(s) in `SalePrice` are not numbers (e.g. 'cheap', '1,000'); "
        "1 value(s) in `SalePrice` are infinite; expected a finite number in every row of `SalePrice`")


def test_empty_labels(tmp_path, answers):
    path = write(tmp_path, "Id,Neighborhood\n1461,A\n1462,\n1463,C\n1464,D\n")
    assert rejected(path, answers, ["Neighborhood"], "accuracy") == (
        "submission.csv: 1 value(s) in `Neighborhood` are empty or NaN; expected a value in every row")


def test_masks_may_be_empty_but_not_malformed(tmp_path):
    answers = write(tmp_path, "image,mask\na,1 3\nb,\n", "answers.csv")
    good = write(tmp_path, "image,mask\nb,\na,2 2\n")
    aligned = load_and_validate(good, answers, "image", ["mask"], "dice")
    assert list(aligned["mask"]) == ["2 2", ""]
    truth = load_answers(answers, "image", ["mask"], "dice")
    assert score("dice", truth, aligned, ["mask"]) == pytest.approx((2 * 2 / 5 + 1) / 2)
    bad = write(tmp_path, "image,mask\na,1 2 3\nb,0 4\n")
    assert rejected(bad, answers, ["mask"], "dice", "image") == (
        "submission.csv: 2 value(s) in `mask` are not run-length encodings `start length start length ...` "
        "(e.g. row 1: '1 2 3': 3 numbers, but runs come in pairs `start length`)")


def test_fathomnet_columns_are_checked_by_role(tmp_path):
    answers = write(tmp_path, "id,categories,osd\nx,1 2,0\ny,3,1\n", "answers.csv")
    good = write(tmp_path, "id,categories,osd\nx,2 1,0.2\ny,,0.9\n")
    aligned = load_and_validate(good, answers, "id", ["categories", "osd"], "fathomnet")
    assert list(aligned["categories"]) == ["2 1", ""]
    assert list(aligned["osd"]) == [0.2, 0.9]
    flags_as_words = write(tmp_path, "id,categories,osd\nx,1 2,False\ny,3,True\n", "answers_words.csv")
    assert list(load_answers(flags_as_words, "id", ["categories", "osd"], "fathomnet")["osd"]) == [0.0, 1.0]
    bad = write(tmp_path, "id,categories,osd\nx,2 1,high\ny,3,0.9\n")
    assert rejected(bad, answers, ["categories", "osd"], "fathomnet", "id").startswith(
        "submission.csv: 1 value(s) in `osd` are not numbers (e.g. 'high')")


# --- the task's side ----------------------------------------------------------------

def test_broken_answers_are_the_tasks_fault(tmp_path):
    submission = write(tmp_path, "Id,SalePrice\n1,2\n")
    with pytest.raises(AnswersError, match=r"the task's answers answers.csv lack column\(s\) \['SalePrice'\]"):
        load_and_validate(submission, write(tmp_path, "Id,Price\n1,2\n", "answers.csv"), "Id", ["SalePrice"], "mae")
    with pytest.raises(AnswersError, match="could not be read"):
        load_and_validate(submission, tmp_path / "absent.csv", "Id", ["SalePrice"], "mae")
    with pytest.raises(AnswersError, match="not scored from a submission table"):
        load_and_validate(submission, tmp_path / "absent.csv", "Id", ["SalePrice"], "runtime")


# --- never a crash ------------------------------------------------------------------

CSV_PIECES = st.sampled_from(["Id", "SalePrice", "1461", "1462", "1463", "1464", ",", "\n", '"', " ",
                              "NaN", "1e309", "x", ";", "\t", "\x00", "é", "-", "."])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(st.lists(CSV_PIECES, max_size=40).map("".join), st.binary(max_size=200)))
def test_any_file_gives_a_frame_or_a_submission_error(tmp_path, answers, text):
    path = write(tmp_path, text.encode("utf-8") if isinstance(text, str) else text)
    try:
        aligned = load_and_validate(path, answers, "Id", ["SalePrice"], "mae")
    except SubmissionError as error:
        assert str(error).startswith(("submission.csv", "no submission"))
    else:
        assert len(aligned) == 4 and aligned["SalePrice"].notna().all()


# --- hostile submissions: non-finite, overflowing, oversized (issue 25) ------------------

@pytest.mark.parametrize("value", ["1e308", "-1e200", "1e101"])
def test_predictions_too_large_to_score_are_a_format_error(tmp_path, answers, value):
    # 1e308 is finite, but the mean of |truth - 1e308| over the rows overflows to inf
    path = write(tmp_path, f"Id,SalePrice\n1461,{value}\n1462,2\n1463,3\n1464,4\n")
    assert rejected(path, answers) == (
        f"submission.csv: 1 value(s) in `SalePrice` are larger in magnitude than 1e+100 (e.g. '{value}'); "
        "expected a finite number in every row of `SalePrice`")


def test_a_metric_that_overflows_is_refused_not_returned(tmp_path, answers):
    import pandas as pd

    truth = load_answers(answers, "Id", ["SalePrice"], "mae")
    aligned = truth.assign(SalePrice=[1e308, -1e308, 1e308, 1.0])
    with pytest.raises(Exception) as caught:
        score("mae", truth, aligned, ["SalePrice"])
    assert str(caught.value) == "the submission's mae is inf, not a finite number: its predictions are too large to score"
    assert pd.notna(truth["SalePrice"]).sum() == 3


def test_too_many_rows_are_refused_before_parsing(tmp_path, monkeypatch):
    # 4 ids: up to 2 * 4 + MAX_ROWS_SLACK rows may be read
    monkeypatch.setattr(submission_module, "MAX_ROWS_SLACK", 10)

    def never(*args, **kwargs):
        raise AssertionError("the submission was parsed")

    monkeypatch.setattr(submission_module.pd, "read_csv", never)
    path = write(tmp_path, "Id,SalePrice\n" + "1461,1\n" * 19)
    with pytest.raises(SubmissionError) as caught:
        submission_module.check_submission(path, ["1461", "1462", "1463", "1464"], "Id", ["SalePrice"], "mae")
    assert str(caught.value) == (
        "submission.csv has more than 18 rows, the limit for a submission of 4 ids (2 per id and 10 more); "
        "expected a CSV file whose header line is `Id,SalePrice` and one row per id")


def test_rows_within_the_bound_are_read_and_checked(tmp_path, answers, monkeypatch):
    monkeypatch.setattr(submission_module, "MAX_ROWS_SLACK", 10)
    path = write(tmp_path, "Id,SalePrice\n" + "1461,1\n" * 18)   # no newline counted past the bound
    assert "1 id(s) appear more than once (e.g. 1461)" in rejected(path, answers)


def test_a_header_of_too_many_columns_is_refused(tmp_path, answers):
    header = ",".join(["Id", "SalePrice", *(f"c{i}" for i in range(100_000))])
    path = write(tmp_path, header + "\n1461,1\n")
    assert rejected(path, answers) == ("submission.csv has a header of 100,002 columns, over the limit of 1,024; "
                                       "expected a CSV file whose header line is `Id,SalePrice`")


def test_a_line_longer_than_the_field_bound_is_refused(tmp_path, answers, monkeypatch):
    monkeypatch.setattr(submission_module, "MAX_LINE_BYTES", 2**20)
    path = write(tmp_path, "Id,SalePrice\n1461," + "9" * (2**20 + 5) + "\n1462,1\n")
    assert rejected(path, answers) == ("submission.csv has a line longer than 1 MiB, the limit for one line of a "
                                       "submission; expected a CSV file whose header line is `Id,SalePrice`")


def test_a_submission_with_every_id_wrong_is_told_how_many_and_which(tmp_path):
    # 50,000 distinct ids, every one of them wrong (how the check's time grows: bench/inputs.py)
    ids = [str(i) for i in range(50_000)]
    answers = write(tmp_path, "Id,y\n" + "".join(f"{i},1\n" for i in ids), "answers.csv")
    path = write(tmp_path, "Id,y\n" + "".join(f"x{i},1\n" for i in ids))
    message = rejected(path, answers, ["y"])
    assert "50000 of the 50000 test ids are missing" in message
    assert "50000 id(s) are not test ids (e.g. x0, x1, x2, x3, x4, ...)" in message


def test_rows_ended_by_carriage_returns_are_counted_too(tmp_path, monkeypatch):
    monkeypatch.setattr(submission_module, "MAX_ROWS_SLACK", 10)
    path = write(tmp_path, "Id,SalePrice\r" + "1461,1\r" * 19)
    with pytest.raises(SubmissionError, match="has more than 18 rows"):
        submission_module.check_submission(path, ["1461", "1462", "1463", "1464"], "Id", ["SalePrice"], "mae")
