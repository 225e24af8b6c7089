"""A whole external run in a dialect other than chat: an inline agent that speaks Anthropic Messages
(tool_use out, tool_result back) through the runner's gateway; the run is scored, each exchange is
one trace step with its dialect and the model name asked for, and the ATIF export lists the tool
calls as the model made them."""
from __future__ import annotations

import json

from agent_helpers import FIT_PY, mlab, only_run, result, scripted, trace
from needs import module
from test_external_runs import build_with, needs_sandbox

atif = module("atif", "the atif package (a test extra: pip install -e '.[test]')")

TOOL_AGENT = '''
agent claude-like external {
  dialect anthropic
  command """
    {{ python }} - <<'AGENT'
    import json, subprocess, urllib.request

    tools = [{"name": "write_and_run", "description": "Write solution.py and run it.",
              "input_schema": {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}}]
    messages = [{"role": "user", "content": open("{{ problem_file }}").read()}]
    for turn in range(5):
        body = json.dumps({"model": "claude-test-model", "max_tokens": 1024, "system": "Solve it.", "tools": tools,
                           "messages": messages}).encode()
        request = urllib.request.Request("{{ api_root }}/v1/messages", data=body, headers={
            "x-api-key": "{{ api_key }}", "anthropic-version": "2023-06-01", "content-type": "application/json"})
        reply = json.loads(urllib.request.urlopen(request, timeout=60).read())
        messages.append({"role": "assistant", "content": reply["content"]})
        uses = [b for b in reply["content"] if b["type"] == "tool_use"]
        if not uses:
            break
        results = []
        for use in uses:
            open("solution.py", "w").write(use["input"]["code"])
            done = subprocess.run(["{{ python }}", "solution.py"], capture_output=True, text=True)
            results.append({"type": "tool_result", "tool_use_id": use["id"], "content": done.stdout + done.stderr})
        messages.append({"role": "user", "content": results})
    AGENT
    """
}
'''


@needs_sandbox
def test_an_anthropic_dialect_agent_is_scored_and_its_trajectory_lists_its_tool_calls(tmp_path, tiny_task):
    build = build_with(tmp_path, tiny_task, TOOL_AGENT)
    model = scripted(tmp_path, [{"content": "Fitting.", "tool_calls": [
        {"id": "toolu_fit", "name": "write_and_run", "arguments": {"code": FIT_PY}}]}, "Done."])
    code, out, err = mlab("run", "tiny", "--build", build, "--agent", "claude-like", "--model", model,
                          "--runs-dir", tmp_path / "runs")
    run = only_run(tmp_path / "runs")
    assert code == 0, err + (run / "output" / "agent.log").read_text()
    document = result(run)
    assert document["success"] is True and document["end_reason"] == "agent_exited"
    exchanges = [r["model"] for r in trace(run) if (r.get("model") or {}).get("external")]
    assert len(exchanges) == 2
    assert {(m["dialect"], m["asked_model"]) for m in exchanges} == {("anthropic", "claude-test-model")}
    assert exchanges[1]["request"]["messages"][-1] == {
        "role": "tool", "tool_call_id": "toolu_fit", "content": exchanges[1]["request"]["messages"][-1]["content"]}

    code, out, err = mlab("eval", run, "--at", "tokens=1k,1M")
    assert code == 0 and run.name in out, err
    code, out, err = mlab("view", run, "--output", tmp_path / "page.html")
    assert code == 0 and "write_and_run" in (tmp_path / "page.html").read_text(), err
    code, out, err = mlab("export", run, "--to", "inspect", "-o", tmp_path / "run.eval")
    assert code == 0, err
    code, out, err = mlab("export", run, "--to", "atif", "-o", tmp_path / "run.atif.json")
    assert code == 0, err
    document = json.loads((tmp_path / "run.atif.json").read_text())
    atif.Trajectory.model_validate(document)  # the format's own models
    steps = document["steps"]
    calls = [c for step in steps for c in step.get("tool_calls") or []]
    assert [(c["tool_call_id"], c["function_name"], c["arguments"]) for c in calls] == \
        [("toolu_fit", "write_and_run", {"code": FIT_PY})]
    (result_of_call,) = [r for step in steps for r in (step.get("observation") or {}).get("results", [])
                         if r.get("source_call_id") == "toolu_fit"]
    assert "predictions" in result_of_call["content"], "the result the agent sent back is the call's observation"


COMPACTING_AGENT = '''
agent codex-like external {
  dialect responses
  command """
    {{ python }} - <<'AGENT'
    import json, urllib.request

    def post(path, body):
        request = urllib.request.Request("{{ api_base }}" + path, data=json.dumps(body).encode(), headers={
            "Authorization": "Bearer {{ api_key }}", "content-type": "application/json"})
        return json.loads(urllib.request.urlopen(request, timeout=60).read())

    asked = [{"role": "user", "content": "Fit a model."}, {"role": "assistant", "content": "Trees fit."}]
    compacted = post("/responses/compact", {"model": "gpt-5-codex", "input": asked})
    post("/responses", {"model": "gpt-5-codex", "input": compacted["output"] + [
        {"type": "reasoning", "summary": [], "encrypted_content": "gAAAA-not-the-gateways"},
        {"role": "assistant", "content": "Next."}, {"role": "user", "content": "Go on."}]})
    AGENT
    """
}
'''


@needs_sandbox
def test_a_compaction_and_dropped_reasoning_state_are_in_the_trace(tmp_path, tiny_task):
    """The gateway's compaction exchange and the note of what it dropped reach the trace (version 7)
    through the external runner: model.compaction, model.notes."""
    from mlab.trace import TRACE_VERSION

    build = build_with(tmp_path, tiny_task, COMPACTING_AGENT)
    model = scripted(tmp_path, ["The summary.", "Going on."])
    code, out, err = mlab("run", "tiny", "--build", build, "--agent", "codex-like", "--model", model,
                          "--runs-dir", tmp_path / "runs")
    run = only_run(tmp_path / "runs")
    records = [r for r in trace(run) if (r.get("model") or {}).get("external")]
    assert len(records) == 2, err + (run / "output" / "agent.log").read_text()
    first, second = (r["model"] for r in records)
    assert first["compaction"] is True and "notes" not in first
    assert "compaction" not in second and second["notes"] == [
        "input[2]: a reasoning item's encrypted_content that this gateway did not issue was dropped (its summary "
        "is kept)"]
    assert second["request"]["messages"][1]["content"].endswith("The summary.")
    assert {r["schema_version"] for r in records} == {TRACE_VERSION} == {7}
