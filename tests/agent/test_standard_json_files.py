"""Every JSON file mlab writes for other programs is standard JSON (valid UTF-8, no NaN or Infinity),
whatever an agent's text or a provider's fields hold: lone surrogates and NaN/Infinity in a run end
up in its trace, result.json, run.json, models.json, scores.jsonl and `--json` output in the forms
docs/interop.md documents, and the trace reads back the same text."""
import json
import math
from pathlib import Path

import pytest

from agent_helpers import mlab, only_run, result, trace, trace_problems
from fake_openai import FakeOpenAI, tool_call
from tool_helpers import use_tools_agent

# A provider answer holding NaN and infinities (fields of its usage and message) and a lone surrogate
# in the text and in a tool call's arguments: Python's decoder reads each of them, and litellm
# passes them on (token counts that are not numbers it refuses itself: a provider error, retried).
HOSTILE_BODY = (
    '{"id": "x", "object": "chat.completion", "created": 0, "model": "gpt-4o", "system_fingerprint": NaN, '
    '"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", '
    '"content": "Thought: a lone \\udcff surrogate", "score": Infinity, "tool_calls": [{"id": "call_a", '
    '"type": "function", "function": {"name": "list_files", "arguments": "{\\"dir_path\\": \\"\\\\udcff\\"}"}}]}}], '
    '"usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17, "cost": NaN, '
    '"reasoning_share": Infinity, "spread": -Infinity}}')
DONE = tool_call("final_answer", {"final_answer": "done \udcff"}, "call_z")


def refuse_constants(name):
    raise ValueError(f"non-standard JSON constant {name}")


def strict(data: bytes):
    """The document in `data` read as standard JSON: strict UTF-8, no NaN or Infinity."""
    return json.loads(data.decode("utf-8"), parse_constant=refuse_constants)


@pytest.fixture
def hostile_run(monkeypatch, tiny_task, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("MLAB_MODEL_BACKOFF", "0")
    use_tools_agent(monkeypatch)
    with FakeOpenAI([DONE], faults=[("body", HOSTILE_BODY)]) as server:
        code, out, err = mlab("run", tiny_task, "--model", "openai/gpt-4o", "--api-base", server.base,
                              "--runs-dir", tmp_path / "runs")
    assert code in (0, 1), err
    assert "Traceback" not in out + err
    return only_run(tmp_path / "runs")


def test_a_hostile_run_writes_standard_json_files_that_read_back(hostile_run):
    run_dir = hostile_run
    document = result(run_dir)
    assert document["end_reason"] == "final_answer"
    assert strict((run_dir / "result.json").read_bytes()) == json.loads((run_dir / "result.json").read_text())
    for name in ("run.json", "models.json"):
        strict((run_dir / name).read_bytes())
    lines = (run_dir / "trace.jsonl").read_bytes().splitlines()
    assert lines and [strict(line) for line in lines]
    assert trace_problems(run_dir) == []
    first = trace(run_dir)[0]
    # the surrogate of the agent's text and of the file name it asked for read back the same
    assert "a lone \udcff surrogate" in json.dumps(first, ensure_ascii=False)
    assert first["action_input"] == {"dir_path": "\udcff"}
    # no non-finite number of the provider's reached a count or a cost
    assert not any(isinstance(v, float) and not math.isfinite(v) for v in _numbers(first))


def _numbers(value):
    if isinstance(value, dict):
        for inner in value.values():
            yield from _numbers(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _numbers(inner)
    elif isinstance(value, (int, float)):
        yield value


def test_eval_of_a_hostile_run_is_standard_json(hostile_run):
    code, out, err = mlab("eval", hostile_run, "--intermediate", "--json")
    assert code == 0, err
    rows = strict(out.encode())["rows"]
    assert len(rows) == 1
    for line in (hostile_run / "scores.jsonl").read_bytes().splitlines():
        strict(line)


def test_the_one_writer_replaces_only_what_standard_json_has_no_value_for(tmp_path):
    from mlab.standard_json import dumps, write_json, write_lines

    hostile = {"nan": float("nan"), "big": [float("inf"), -float("inf")], "text\udcff": "a \udcff b",
               "path": Path("x"), "fine": [1, 2.5, "é", None, True]}
    write_json(tmp_path / "doc.json", hostile)
    assert strict((tmp_path / "doc.json").read_bytes()) == {
        "nan": "NaN", "big": ["Infinity", "-Infinity"], "text\\udcff": "a \\udcff b", "path": "x",
        "fine": [1, 2.5, "é", None, True]}
    write_lines(tmp_path / "rows.jsonl", [{"a": float("nan")}, {"b": 1}])
    assert [strict(line) for line in (tmp_path / "rows.jsonl").read_bytes().splitlines()] == [{"a": "NaN"}, {"b": 1}]
    # a document standard JSON holds as it is is written as it is
    assert dumps({"fine": [1, 2.5, "é"]}, indent=None) == json.dumps({"fine": [1, 2.5, "é"]}, ensure_ascii=False)
    # the trace keeps a lone surrogate (it escapes it itself) while replacing a NaN
    assert dumps({"s": "\udcff", "n": float("nan")}, indent=None, keep_surrogates=True) == '{"s": "\udcff", "n": "NaN"}'


def test_a_trace_record_with_a_nan_and_a_surrogate_is_standard_json_and_reads_back():
    from mlab.trace import encode_record

    line = encode_record({"step": 0, "observation": "name \udcff", "model": {"cost": float("nan")}})
    document = strict(line)
    assert document == {"step": 0, "observation": "name \udcff", "model": {"cost": "NaN"}}
