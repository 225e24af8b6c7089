"""A run whose submission is missing or malformed ends with `submission format error`, saying what
was expected, and never with a score."""
import pytest

from agent_helpers import mlab, only_run, research_reply, result, scripted

SUBMIT = research_reply("Final Answer", {"final_answer": "submitted"})
CASES = {
    "missing": ([SUBMIT], "no submission: submission.csv (columns Id, y) was not found in the workspace"),
    "wrong-columns": ([research_reply("Write File", {"file_name": "submission.csv", "content": "Id,z\n0,1\n"}),
                       SUBMIT], "lacks column(s) ['y']: expected columns ['Id', 'y'], found ['Id', 'z']"),
    "duplicate-ids": ([research_reply("Execute Script", {"script_name": "duplicate_ids.py"}), SUBMIT],
                      "(expected columns: Id, y)"),
    "nan-values": ([research_reply("Execute Script", {"script_name": "nan_values.py"}), SUBMIT],
                   "(expected columns: Id, y)"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_submission_is_a_submission_format_error(case, tiny_task, tmp_path):
    replies, expected = CASES[case]
    code, out, err = mlab("run", tiny_task, "--model", scripted(tmp_path, replies), "--runs-dir", tmp_path / "runs")
    assert code == 1, err
    document = result(only_run(tmp_path / "runs"))
    assert document["failure_mode"] == "submission format error"
    assert expected in document["detail"] and document["submission_problem"] == document["detail"]
    assert document["score"] is None and document["improvement"] is None and document["success"] is False
    assert document["end_reason"] == "final_answer" and document["baseline"]["value"] is not None
    assert "mae: none" in out and "no success (submission format error)" in out
    assert f"detail: {document['detail']}" in out
