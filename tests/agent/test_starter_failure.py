"""A starter that fails on a file the workspace lacks is the task's error, quoting the starter's
own error: the verdict is `task error`, whatever the agent did, never `no submission`."""
from __future__ import annotations

from agent_helpers import mlab, only_run, research_reply, result, scripted, write_tiny_task

from mlab.scoring.baseline import starter_failure

READS_MISSING = """\
import csv
rows = list(csv.DictReader(open("data_description.txt")))
"""


def test_the_quoted_error_is_the_last_line_of_the_traceback():
    output = ('Traceback (most recent call last):\n  File "train.py", line 2, in <module>\n'
              "    rows = open('data_description.txt')\n"
              "FileNotFoundError: [Errno 2] No such file or directory: 'data_description.txt'\n")
    assert starter_failure("train.py", 1, output) == (
        "the starter train.py failed (exit code 1): FileNotFoundError: [Errno 2] No such file or directory: "
        "'data_description.txt'; the workspace lacks a file the starter reads")
    assert starter_failure("train.py", 1, "pandas.errors.EmptyDataError: No columns to parse from file\n") == (
        "the starter train.py failed (exit code 1): pandas.errors.EmptyDataError: No columns to parse from file")
    assert starter_failure("train.py", 3, "") == "the starter train.py failed (exit code 3): no output"


def test_a_starter_reading_a_missing_file_makes_the_run_a_task_error(tmp_path):
    source = write_tiny_task(tmp_path / "task")
    (source.parent / "env" / "train.py").write_text(READS_MISSING)
    # the agent submits nothing: without the starter's failure this run would be the agent's
    replies = [research_reply("Final Answer", {"final_answer": "done"})]
    code, out, err = mlab("run", source, "--model", scripted(tmp_path, replies), "--runs-dir", tmp_path / "runs")
    assert code == 1, err
    document = result(only_run(tmp_path / "runs"))
    assert document["failure_mode"] == "task error"
    assert document["detail"] == (
        "the baseline could not be measured: the starter train.py failed (exit code 1): FileNotFoundError: "
        "[Errno 2] No such file or directory: 'data_description.txt'; the workspace lacks a file the starter reads")
    assert "no submission" not in document["detail"]
