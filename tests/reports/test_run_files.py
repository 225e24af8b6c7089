"""How a report reads a run folder's small files, which may come from elsewhere: each named file
opened without following a link or blocking on a pipe, and scores.jsonl read up to its first line
that is not a row, its rows checked a field at a time (mlab.bounded_json.shapes_fit) with the
same verdict as the check of each row."""
from __future__ import annotations

import json
import os
import random
import shutil

import pytest

from report_helpers import mlab


def test_a_file_of_a_run_folder_that_is_a_link_or_a_pipe_is_not_read(tmp_path):
    from mlab.bounded_json import UntrustedFile, read_bytes

    secret = tmp_path / "secret.json"
    secret.write_text('{"answer": 42}')
    run = tmp_path / "run"
    run.mkdir()
    (run / "result.json").symlink_to(secret)
    os.mkfifo(run / "budgets.json")
    with pytest.raises(UntrustedFile, match=f"result.json is not read: result.json is a symbolic link to {secret}"):
        read_bytes(run / "result.json")
    with pytest.raises(UntrustedFile, match="budgets.json is not read: budgets.json is a named pipe"):
        read_bytes(run / "budgets.json")   # refused without blocking on it
    (run / "run.json").write_text('{"id": 1}')
    assert read_bytes(run / "run.json") == b'{"id": 1}'
    with pytest.raises(UntrustedFile, match="it holds 9 bytes, more than the 8 accepted"):
        read_bytes(run / "run.json", limit=8)


def test_a_run_whose_result_is_a_link_is_left_out_of_the_report_saying_so(run_of, tmp_path):
    runs = tmp_path / "runs"
    for name in ("research-0", "research-1"):
        shutil.copytree(run_of(name), runs / run_of(name).name, symlinks=True)
    linked = runs / run_of("research-1").name / "result.json"
    linked.unlink()
    target = runs / run_of("research-0").name / "result.json"
    linked.symlink_to(target)
    code, out, err = mlab("report", runs, "-o", tmp_path / "report")
    assert code == 0, err
    assert "Traceback" not in err and f"{linked} is not read: result.json is a symbolic link to {target}" in err
    assert "1 finished runs" in (tmp_path / "report" / "report.md").read_text()


def _write_rows(run, lines: list[str]) -> None:
    (run / "scores.jsonl").write_text("".join(line + "\n" for line in lines))


@pytest.mark.parametrize("first, later, said", [
    ({"score": "high"}, "{not json", "line 4 is not a row of scores: score is a string, not number or null"),
    ("{not json", {"score": "high"}, "line 4 is not a row of scores: it is not JSON"),
    ({"step": -1}, {"success": 1}, "line 4 is not a row of scores: step is -1, below 0"),
])
def test_scores_are_read_up_to_the_first_line_that_is_not_a_row(run_of, tmp_path, capsys, first, later, said):
    from mlab.reports.runs import read_scores

    run = tmp_path / "run"
    shutil.copytree(run_of("research-0"), run, symlinks=True)
    rows = [json.loads(line) for line in (run / "scores.jsonl").read_text().splitlines()]
    assert len(rows) >= 4
    spoil = lambda row, how: how if isinstance(how, str) else json.dumps({**row, **how})   # noqa: E731
    lines = [json.dumps(row) for row in rows]
    lines[2], lines[3] = spoil(rows[2], first), spoil(rows[3], later)
    lines.insert(1, "")   # a blank line is passed over, and counted
    _write_rows(run, lines)
    assert read_scores(run) == rows[:2]
    assert f"{run / 'scores.jsonl'} {said}" in capsys.readouterr().err


def test_the_column_check_of_rows_says_what_the_check_of_each_row_says():
    from mlab.bounded_json import shape_problem, shapes_fit

    good = {"step": 1, "score": 0.5, "improvement": 0.1, "success": True, "elapsed_s": 3.0, "tokens": 5,
            "cost": None, "submission": "0" * 64, "problem": None}
    values = [0, 1, -1, 2.5, -0.5, float("nan"), True, False, None, "x", "a" * 64, "0" * 64, [], {}, [1], {"a": 1}]
    chosen = random.Random(0)
    verdicts = set()
    for _ in range(5000):
        rows = []
        for _ in range(chosen.randint(0, 4)):
            row = dict(good)
            for _ in range(chosen.randint(0, 2)):
                key = chosen.choice([*good, "extra"])
                if chosen.random() < 0.2:
                    row.pop(key, None)
                else:
                    row[key] = chosen.choice(values)
            rows.append(row if chosen.random() > 0.02 else chosen.choice(values))
        expected = all(shape_problem("scores", row) is None for row in rows)
        assert shapes_fit("scores", rows) == expected, rows
        verdicts.add(expected)
    assert verdicts == {True, False}


@pytest.mark.parametrize("text", ['{"a": 1}', ' {"a": 1}\t\r\n', '{"a": 1} x', '{"a": 1}{"b": 2}', "", " ", "x",
                                  "1", "[1, NaN, Infinity]", '\ufeff{"a": 1}', '{"a": 1,}', '{"a": "\u2028"}',
                                  '{"a": "\x01"}', '{"a": 1}\x0b', "[1", "nul"])
def test_a_line_is_decoded_as_json_loads_decodes_it(text):
    """bounded_json.loads reads a plain line with the decoder's scanner alone: the same value, or
    json.loads's own error (what the note about a broken line of scores says)."""
    from mlab.bounded_json import loads

    def outcome(decode):
        try:
            return "value", decode(text)
        except ValueError as error:
            return type(error).__name__, str(error)

    assert repr(outcome(loads)) == repr(outcome(json.loads))


def test_score_rows_without_an_improvement_or_with_a_null_success_are_drawn(run_of, tmp_path):
    """A row of scores.jsonl need hold only its step and score: one without an improvement, or whose
    success is null, is a point with no value on the anytime curves, not a traceback."""
    runs = tmp_path / "runs"
    run = runs / run_of("research-0").name
    shutil.copytree(run_of("research-0"), run, symlinks=True)
    rows = [json.loads(line) for line in (run / "scores.jsonl").read_text().splitlines()]
    rows[1].pop("improvement")
    rows[-1]["success"] = None
    _write_rows(run, [json.dumps(row) for row in rows])
    code, out, err = mlab("report", runs, "-o", tmp_path / "report")
    assert code == 0 and "Traceback" not in err, err
    assert "![anytime curves](anytime.png)" in (tmp_path / "report" / "report.md").read_text()
