"""Run folders with hand-written trace records, shaped as trace schema v3 says: a tree search's
nodes and a tool agent's calls. Each is a copy of a real run of the tiny task (its run.json,
build copy and objects) whose trace and result are replaced, so the viewer and the reports read
them as they read any run."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from mlab.snapshots import ObjectStore
from trace_records import record

# node, parent, operator, validation (None: none read), buggy, the code it wrote to train.py
TREE = [
    (1, None, "draft", 0.9, False, "W = 0.3\nprint('validation mae', 0.9)\n"),
    (2, None, "draft", None, True, "W = 0.5\nprint('validation mae', undefined)\n"),
    (3, 2, "debug", 0.5, False, "W = 0.5\nprint('validation mae', 0.5)\n"),
    (4, 1, "improve", 0.7, False, "W = 0.4\nprint('validation mae', 0.7)\n"),
    (5, 3, "improve", 0.4, False, "W = 0.6\nprint('validation mae', 0.4)\n"),
]
SUBMITTED = 5


def base_record(step: int, **fields) -> dict:
    """A record as trace schema v3 wrote it (hooks an empty object): the one hand-made record
    (trace_records.record) with v3's stamp."""
    return record(step, **{"schema_version": 3, "hooks": {}, **fields})


def _copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, symlinks=True)
    for name in ("scores.jsonl", "view.html"):
        (target / name).unlink(missing_ok=True)
    return target


def renamed(run: Path, run_id: str, seed: int, agent: str | None = None) -> Path:
    """The run under another id and seed (and agent name), in run.json and result.json alike."""
    for name in ("run.json", "result.json"):
        doc = json.loads((run / name).read_text())
        doc["id" if name == "run.json" else "run_id"] = run_id
        doc["seed"] = seed
        if agent:
            doc["agent"] = agent
        (run / name).write_text(json.dumps(doc))
    return run


def _write(run: Path, records: list[dict], result: dict) -> None:
    (run / "trace.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (run / "result.json").write_text(json.dumps(result))


def tree_run(source: Path, target: Path, nodes=TREE, submitted: int | None = SUBMITTED,
             failure_mode: str | None = None, end_reason: str = "steps_limit") -> Path:
    """A greedy search's five nodes (a buggy draft, its debug, two improves), node 5 submitted."""
    run = _copy(source, target)
    store = ObjectStore(run / "objects", durable=False)
    records = []
    for step, (node, parent, operator, validation, buggy, code) in enumerate(nodes, 1):
        digest = store.put_bytes(code.encode())
        output = (f"Traceback (most recent call last):\nNameError: name 'undefined' is not defined\n" if buggy
                  else f"validation mae {validation}\n")
        records.append(base_record(
            step, action=operator, observation=output, node=node, parent=parent, operator=operator,
            validation=validation, buggy=buggy, holdout=None, search={"debug_depth": int(operator == "debug")},
            status="ok", snapshot={"changed": {"train.py": digest}, "removed": []},
            compute={"wall_s": 0.2, "cpu_s": 0.1, "peak_memory_bytes": 1 << 20, "exit_code": 1 if buggy else 0,
                     "timed_out": False, "out_of_memory": False, "killed_reason": None, "sandboxed": True},
            model={"reply": {"plan": f"Plan of node {node}: {operator} with W from the code."},
                   "response": f"Plan of node {node}.\n```python\n{code}```",
                   "calls": [{"tier": "main", "model": "mlab/scripted", "purpose": operator,
                              "prompt_tokens": 100 * node, "completion_tokens": 10, "latency_s": 0.1}]}))
    # the closing record, as the engine writes it: its delta is against every delta applied in
    # order, and leaves the submitted node's workspace (or the initial one)
    linear = dict(store.get_json(json.loads((run / "run.json").read_text())["initial_snapshot"]))
    target = dict(linear)
    for record in records:
        linear.update(record["snapshot"]["changed"])
    if submitted is not None:
        target["train.py"] = store.put_bytes(next(n[5] for n in nodes if n[0] == submitted).encode())
    records.append(base_record(
        len(records) + 1, status="ended", end_reason=end_reason, observation="The search ended.",
        snapshot={"changed": {k: v for k, v in target.items() if linear.get(k) != v},
                  "removed": [k for k in linear if k not in target]},
        search={"submitted_node": submitted, "selected_by": "validation"}))
    result = json.loads((source / "result.json").read_text())
    valid = [n for n in nodes if not n[4] and n[3] is not None]
    chosen = next((n for n in nodes if n[0] == submitted), None)
    result.update({
        "schema_version": 3, "steps": len(nodes), "end_reason": end_reason,
        "search": {"policy": "greedy", "nodes": len(nodes), "valid_nodes": len(valid),
                   "buggy_nodes": len(nodes) - len(valid), "submitted_node": submitted,
                   "submitted_validation": chosen[3] if chosen else None, "selected_by": "validation"}})
    if failure_mode:
        result.update({"failure_mode": failure_mode, "success": False, "score": None, "improvement": None,
                       "submitted": False})
    _write(run, records, result)
    return run


def tool_call_record(step: int, name: str, arguments: str, call_id: str, observation: str, *,
                     is_error: bool = False, message: dict | None = None, index: int = 0, action: str | None = None,
                     reply: dict | None = None, form: str = "tools", content: str | None = None) -> dict:
    model = {"format": form, "reply": reply or {},
             "tool_call": {"id": call_id, "name": name, "arguments": arguments, "index": index},
             "tool_result": {"tool_call_id": call_id, "content": observation if content is None else content,
                             "is_error": is_error},
             "calls": [{"tier": "main", "model": "openai/fake", "purpose": "step", "prompt_tokens": 900,
                        "completion_tokens": 40, "latency_s": 0.2}]}
    if message is not None:
        model["message"] = message
    return base_record(step, action=action or name, action_input=json.loads(arguments) if arguments.startswith("{")
                       and arguments.endswith("}") else arguments, observation=observation,
                       status="error" if is_error else "ok", model=model)


def _as_tool_agent(run: Path) -> None:
    """Make the run's build copy declare its agent as a tool agent (text sections Reflection and
    Thought), under a build digest of its own so that no cached copy of the original is read."""
    meta = json.loads((run / "run.json").read_text())
    agent = run / "build" / "agents" / meta["agent"] / "agent.json"
    doc = json.loads(agent.read_text())
    sections = [s for s in doc["reply"]["sections"] if s["name"] in ("Reflection", "Thought")]
    doc["reply"] = {"format": "tools", "sections": sections, "sections_required": False, "tool_choice": "auto",
                    "parallel": "ordered", "list_tools": False,
                    "fallback": {"format": "sections", "sections": doc["reply"]["sections"]}}
    # a tool agent's templates (the copy must match spec/agent.schema.json to be read at all)
    doc["templates"] = {**doc["templates"], "problem": "templates/problem.j2", "turn": "templates/turn.j2"}
    agent.write_text(json.dumps(doc))
    meta["build"]["digest"] = "c" * 64   # its own (other tests' forged builds are 6, 7, 8, d and e): cached per digest
    (run / "run.json").write_text(json.dumps(meta))


def tool_run(source: Path, target: Path) -> Path:
    """A tool agent's three steps: a message with two calls run in order, then a call whose
    arguments fail the schema (answered with an error result), then a step of the fallback."""
    run = _copy(source, target)
    _as_tool_agent(run)
    message = {"role": "assistant", "content": "Reflection: nothing yet.\nThought: list, then read.",
               "tool_calls": [
                   {"id": "call_a1", "type": "function",
                    "function": {"name": "list_files", "arguments": '{"dir_path":  "."}'}},
                   {"id": "call_b2", "type": "function",
                    "function": {"name": "read_file", "arguments": '{"file_name": "train.py"}'}}],
               "reasoning_content": "the model's reasoning, echoed back"}
    records = [
        tool_call_record(1, "list_files", '{"dir_path":  "."}', "call_a1", "train.py\ntrain.csv\ntest.csv\n",
                         message=message, action="List Files",
                         reply={"Reflection": "nothing yet.", "Thought": "list, then read."}),
        tool_call_record(2, "read_file", '{"file_name": "train.py"}', "call_b2", "import csv\n", index=1,
                         action="Read File"),
        tool_call_record(3, "execute_script", '{"script": 5}', "call_c3",
                         "The arguments do not fit the tool's schema: 'script_name' is a required property",
                         is_error=True, action="Execute Script",
                         message={"role": "assistant", "content": None, "tool_calls": [
                             {"id": "call_c3", "type": "function",
                              "function": {"name": "execute_script", "arguments": '{"script": 5}'}},
                             {"id": "call_d4", "type": "function",
                              "function": {"name": "list_files", "arguments": '{"dir_path": "."}'}}]}),
        base_record(4, action="List Files", action_input={"dir_path": "."}, observation="train.py\n",
                    model={"format": "sections", "reply": {"Fact Check": "nothing is claimed",
                                                           "Action": "List Files", "Action Input": "{}"},
                           "response": "Fact Check: nothing is claimed\nAction: List Files\nAction Input: {}"}),
    ]
    records[2]["model"]["other_results"] = [{"tool_call_id": "call_d4",
                                             "content": "One action per step: this call was not run."}]
    records[-1]["end_reason"] = "steps_limit"
    result = json.loads((source / "result.json").read_text())
    result.update({"schema_version": 3, "steps": 4,
                   "reply_format": {"declared": "tools", "ran": "tools", "reason": None}})
    _write(run, records, result)
    return run
