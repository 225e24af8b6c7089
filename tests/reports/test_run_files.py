"""How a report reads a run folder's small files, which may come from elsewhere: each named file
opened without following a link or blocking on a pipe, and scores.jsonl read up to its first line
that is not a row, its rows checked a field at a time (mlab.bounded_json.shapes_fit) with the
same verdict as the check of each row."""
from __future__ import annotations

import os
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
