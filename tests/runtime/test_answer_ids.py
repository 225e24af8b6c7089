"""A prepared variant's answers are checked against the public test file before any run: a task
whose generator writes answers with repeated, empty or other ids than test.csv's stops at
preparation as the task's error, naming the files and the ids, instead of a run blaming the
agent's submission ("test ids are missing") after Validate Submission called it valid."""
from __future__ import annotations

import pytest

from mlab.build import resolve_task
from mlab.cli import main
from mlab.data.answers import answer_problem
from mlab.data.prepare import prepare_data
from mlab.errors import DataError

from test_data_preparation import make_task

WRITER = '''
def make(public_dir, private_dir, seed):
    (public_dir / "train.csv").write_text("id,x,y\\n1,1,2\\n2,2,4\\n")
    (public_dir / "test.csv").write_text("id,x\\n3,3\\n4,4\\n5,5\\n")
    (private_dir / "answers.csv").write_text("id,y\\n" + ANSWERS)
'''
VARIANT = """data lite { from generate "gen.py:make" id "id" answers ["y"]
    public ["train.csv", "test.csv"] private ["answers.csv"] }"""


def _task(tmp_path, answers: str):
    return make_task(tmp_path / "t", VARIANT, {"gen.py": WRITER.replace("ANSWERS", repr(answers))})


@pytest.mark.parametrize("answers, expected", [
    ("3,6\n4,8\n5,10\n", None),
    ("3,6\n4,8\n", r"public test.csv has 1 id\(s\) with no answer \('5'\)"),
    ("3,6\n4,8\n5,10\n9,18\n", r"private answers.csv answers 1 id\(s\) not in test.csv \('9'\)"),
    ("3,6\n3,8\n5,10\n", r"private answers.csv repeats the id\(s\) '3'"),
    ("3,6\n,8\n5,10\n", r"private answers.csv has an empty id on line\(s\) 3"),
])
def test_answers_must_name_the_test_files_ids_once_each(tmp_path, mlab_env, answers, expected):
    task = resolve_task(str(_task(tmp_path, answers)))
    if expected is None:
        assert prepare_data(task, "lite").private.joinpath("answers.csv").is_file()
        return
    with pytest.raises(DataError, match="data variant lite of task mini: the answers are not usable: " + expected):
        prepare_data(task, "lite")


def test_mlab_prepare_reports_bad_answers_in_one_line(tmp_path, mlab_env, capsys):
    source = _task(tmp_path, "3,6\n4,8\n")
    assert main(["prepare", str(source)]) == 1
    err = capsys.readouterr().err
    assert "the answers are not usable: public test.csv has 1 id(s) with no answer ('5')" in err
    assert "Traceback" not in err


def test_many_ids_are_counted_and_a_few_quoted(tmp_path):
    (tmp_path / "answers.csv").write_text("id,y\n" + "".join(f"a{i},1\n" for i in range(10)))
    (tmp_path / "test.csv").write_text("id,x\n" + "".join(f"b{i},1\n" for i in range(10)))
    problem = answer_problem(tmp_path / "answers.csv", tmp_path / "test.csv", "id")
    assert problem.startswith("public test.csv has 10 id(s) with no answer ('b0', 'b1', 'b2' and 7 more)")
    assert problem.endswith("private answers.csv answers 10 id(s) not in test.csv ('a0', 'a1', 'a2' and 7 more)")
