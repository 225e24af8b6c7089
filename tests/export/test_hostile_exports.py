"""Runs holding hostile tool calls the harness never ran (NaN and Infinity in the arguments,
arguments nested 900 deep, lone surrogates) export as standard JSON, in the documented forms."""
import json

import pytest

from agent_helpers import mlab
from export_helpers import copy_run, records, tool_agent_records, write_records
from needs import module

HOSTILE = {  # tool call id -> the arguments a model sent, never run (answered "Not run")
    "call_N": '{"x": NaN, "y": Infinity, "z": -Infinity}',
    "call_D": "[" * 900 + "]" * 900,
    "call_S": '{"file_name": "\udcff.py"}',
}


def refuse_constants(name):
    raise ValueError(f"non-standard JSON constant {name}")


def hostile_run(std_runs, tmp_path):
    run_dir = copy_run(std_runs["research"], tmp_path / "hostile")
    made = tool_agent_records(records(run_dir))
    last = made[-1]["model"]
    for call_id, arguments in HOSTILE.items():
        last["message"]["tool_calls"].append({"id": call_id, "type": "function",
                                              "function": {"name": "list_files", "arguments": arguments}})
        last["other_results"].append({"tool_call_id": call_id, "content": "Not run: one action per step.",
                                      "is_error": True})
    last["message"]["content"] = "a lone surrogate \udcff in the text"
    made[0]["action_input"] = {"dir_path": ".", "weight": float("nan")}  # as a lenient parse once kept it
    write_records(run_dir, made)
    return run_dir


def test_an_atif_export_of_hostile_calls_is_standard_json(std_runs, tmp_path):
    out = tmp_path / "hostile.json"
    code, _, err = mlab("export", hostile_run(std_runs, tmp_path), "--to", "atif", "-o", out)
    assert code == 0, err
    text = out.read_bytes().decode("utf-8")  # strict UTF-8: no lone surrogate
    document = json.loads(text, parse_constant=refuse_constants)
    calls = {c["tool_call_id"]: c for s in document["steps"] for c in s.get("tool_calls") or []}
    assert calls["call_N"]["arguments"] == {"x": "NaN", "y": "Infinity", "z": "-Infinity"}
    assert calls["call_D"]["arguments"] == {}  # past the bound: not decoded, the text is kept as sent
    assert calls["call_S"]["arguments"] == {"file_name": "\\udcff.py"}
    assert "a lone surrogate \\udcff in the text" in [s.get("message") for s in document["steps"]]


def test_an_inspect_export_of_hostile_calls_reads_back(std_runs, tmp_path):
    inspect_log = module("inspect_ai.log", "inspect-ai (a test extra: pip install -e '.[test]')")
    out = tmp_path / "hostile.eval"
    code, _, err = mlab("export", hostile_run(std_runs, tmp_path), "--to", "inspect", "-o", out)
    assert code == 0, err
    sample = inspect_log.read_eval_log(str(out)).samples[0]
    calls = {c.id: c for m in sample.messages if m.role == "assistant" for c in m.tool_calls or []}
    assert calls["call_N"].arguments == {"x": "NaN", "y": "Infinity", "z": "-Infinity"}
    assert calls["call_D"].arguments == {}
    assert calls["call_S"].arguments == {"file_name": "\\udcff.py"}


def test_standard_values_have_the_documented_forms():
    from mlab.standard_json import MAX_EXPORT_DEPTH, TOO_DEEP, json_text, standard

    deep = []
    for _ in range(MAX_EXPORT_DEPTH + 50):
        deep = [deep]
    value = standard({"n": float("nan"), "i": [float("inf"), -float("inf")], "s\udcff": "\udcff", "d": deep})
    assert (value["n"], value["i"], value["s\\udcff"]) == ("NaN", ["Infinity", "-Infinity"], "\\udcff")
    inner = value["d"]
    for _ in range(MAX_EXPORT_DEPTH - 1):
        inner = inner[0]
    assert inner == TOO_DEEP
    json.loads(json_text(value), parse_constant=refuse_constants)


def test_a_json_document_on_stdout_is_standard_json(capsys):
    from types import SimpleNamespace

    from mlab.cli.args import print_json

    print_json(SimpleNamespace(), {"score": float("nan"), "best": float("inf"), "note": "\udcff"})
    assert json.loads(capsys.readouterr().out, parse_constant=refuse_constants) == {
        "score": "NaN", "best": "Infinity", "note": "\\udcff"}
