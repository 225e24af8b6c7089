"""Helpers of the export tests: runs of the standard agents, hand-written trace v3 records."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from agent_helpers import FIT_PY, mlab, only_run, scripted


def std_agent_names(tiny_task: Path) -> list[str]:
    """Every agent of the standard library that the tiny task's build holds (whatever compiles now),
    not the task file's own."""
    from mlab.build import compile_into_cache

    own = set(re.findall(r"^agent ([\w-]+)", Path(tiny_task).read_text(), re.M))
    return sorted(set(compile_into_cache([tiny_task]).agent_names) - own)


# A tree-search node's reply: a plan, then the whole script, which prints the validation score the
# std tree agents read ("Validation score: N") and writes the better model's submission.
TREE_REPLY = "Fit y = 2x + 1 (node NODE).\n\n```python\n" + FIT_PY + 'print("Validation score: 0.NODE")\n```\n'
TREE_NODES = 4  # MCTS's fourth node improves one of its three drafts: a node with a parent


def run_arguments(tiny_task: Path, agent: str, folder: Path) -> list:
    """How a std agent's small run is made: mlab/demo plays list, run, submit in any reply format; a
    tree-search agent gets scripted node replies (the tiny task has no demonstration variants)."""
    from mlab.build import compile_into_cache

    if compile_into_cache([tiny_task]).agent(agent).view.search:
        replies = [TREE_REPLY.replace("NODE", str(n)) for n in range(1, TREE_NODES + 1)]
        return ["--model", scripted(folder, replies, f"{agent}.json"), "--steps", TREE_NODES]
    return ["--model", "mlab/demo"]


def make_std_runs(tiny_task: Path, folder: Path) -> dict[str, Path | str]:
    """agent → its run folder, or why the run failed (the test of every agent reports those; a test of
    one agent's run is not held up by another's)."""
    runs: dict[str, Path | str] = {}
    for agent in std_agent_names(tiny_task):
        try:
            code, out, err = mlab("run", tiny_task, "--agent", agent, *run_arguments(tiny_task, agent, folder),
                                  "--runs-dir", folder / agent)
        except Exception as problem:  # noqa: BLE001 (a crash is reported as that agent's failure)
            code, out, err = None, "", f"{type(problem).__name__}: {problem}"
        runs[agent] = only_run(folder / agent) if code == 0 else f"exit {code}: {(err + out).strip()[-600:]}"
    return runs


def records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (Path(run_dir) / "trace.jsonl").read_text().splitlines() if line]


def write_records(run_dir: Path, new: list[dict]) -> None:
    (Path(run_dir) / "trace.jsonl").write_text("".join(json.dumps(r) + "\n" for r in new))


def copy_run(run_dir: Path, target: Path) -> Path:
    shutil.copytree(run_dir, target, ignore=shutil.ignore_patterns("workspace"))
    return target


def record_problems(run_dir: Path) -> list[str]:
    """The hand-written records checked against spec/trace.schema.json (they must be real v3 records)."""
    from mlabc.schemas import problems

    return [f"step {r.get('step')}: {p}" for r in records(run_dir) for p in problems("trace", r)]


def call(tier: str, prompt: int, completion: int, cached: int = 0, cost: float = 0.001, model: str = "openai/gpt-x",
         purpose: str = "step") -> dict:
    return {"tier": tier, "model": model, "purpose": purpose, "prompt_tokens": prompt,
            "completion_tokens": completion, "cached_tokens": cached, "cost": cost, "latency_s": 0.5,
            "attempts": 1, "usage_reported": True, "response": "", "prompt": None}


def tool_agent_records(template: list[dict]) -> list[dict]:
    """A tool agent's trace (v3): one message with two calls run in order (two records, the first holding
    the message), then a message with the final answer. Built on a real run's records (List Files,
    Execute Script, Final Answer), so every other field is as the harness writes it."""
    first, second, third = (json.loads(json.dumps(r)) for r in template[:3])
    message = {"role": "assistant", "content": "Thought: look, then run the fit.",
               "reasoning_content": "The files first; then the better model.",
               "tool_calls": [{"id": "call_A1", "type": "function",
                               "function": {"name": "list_files", "arguments": "{\"dir_path\": \".\"}"}},
                              {"id": "call_B2", "type": "function",
                               "function": {"name": "execute_script", "arguments": "{\"script_name\":\"fit.py\"}"}}]}
    opening = ("[system]\nYou are a researcher. Use the tools.\n\n[user]\nResearch problem:\nPredict y from x.\n\n"
               "[user]\nThis is step 1 of at most 30.")
    later = (f"{opening}\n\n[assistant]\nThought: look, then run the fit.\n-> list_files {{\"dir_path\": \".\"}} [call_A1]"
             f"\n-> execute_script {{\"script_name\":\"fit.py\"}} [call_B2]\n\n[tool (call_A1)]\n{first['observation']}"
             f"\n\n[tool (call_B2)]\n(summary) wrote 4 predictions\n\n[user]\nThis is step 3 of at most 30.\n")
    first["model"] = {"prompt": opening + "\n", "format": "tools", "message": message,
                      "reply": {"Thought": "look, then run the fit."},
                      "calls": [call("main", 1200, 80, cached=1000)],
                      "tool_call": {"id": "call_A1", "name": "list_files", "arguments": "{\"dir_path\": \".\"}",
                                    "index": 0},
                      "tool_result": {"tool_call_id": "call_A1", "content": first["observation"], "is_error": False}}
    second["model"] = {"format": "tools", "calls": [],
                       "tool_call": {"id": "call_B2", "name": "execute_script",
                                     "arguments": "{\"script_name\":\"fit.py\"}", "index": 1},
                       "tool_result": {"tool_call_id": "call_B2", "content": "(summary) wrote 4 predictions",
                                       "is_error": False}}
    final = {"role": "assistant", "content": None,
             "tool_calls": [{"id": "call_C3", "type": "function",
                             "function": {"name": "final_answer", "arguments": "{\"final_answer\": \"done\"}"}},
                            {"id": "call_D4", "type": "function",  # one call too many: answered, not run
                             "function": {"name": "list_files", "arguments": "{\"dir_path\": \"data\"}"}}]}
    third["model"] = {"prompt": later, "format": "tools", "message": final,
                      "calls": [call("main", 1500, 20, cached=1200), call("fast", 300, 40, purpose="summary")],
                      "tool_call": {"id": "call_C3", "name": "final_answer",
                                    "arguments": "{\"final_answer\": \"done\"}", "index": 0},
                      "tool_result": {"tool_call_id": "call_C3", "content": third["observation"], "is_error": False},
                      "other_results": [{"tool_call_id": "call_D4", "content": "Not run: one action per step.",
                                         "is_error": True}]}
    for record in (first, second, third):
        record["schema_version"] = 3
    return [first, second, third]


def tree_records(template: list[dict]) -> list[dict]:
    """A tree search's trace (v3) shaped as the engine writes it: a draft (node 1), a buggy draft
    (node 2), a debug of node 2 (node 3) and an improve of node 1 (node 4), each a record of its own,
    then the closing record saying which node was submitted."""
    base = json.loads(json.dumps(template[1]))  # an Execute Script record: compute, snapshot
    shapes = [(1, None, "draft", 0.5, False), (2, None, "draft", None, True), (3, 2, "debug", 0.4, False),
              (4, 1, "improve", 0.3, False)]
    made = []
    for step, (node, parent, operator, validation, buggy) in enumerate(shapes, 1):
        record = json.loads(json.dumps(base))
        code = f"print({node})\n"
        record.update({"step": step, "schema_version": 3, "action": operator,
                       "action_input": {"code_file": "train.py", "parents": [] if parent is None else [parent]},
                       "resolved": None, "status": "error" if buggy else "ok", "end_reason": None,
                       "observation": f"output of node {node}", "node": node, "parent": parent, "operator": operator,
                       "validation": validation, "buggy": buggy, "search": {"reason": "test", "random": f"0:{node}"}})
        record["model"] = {"prompt": f"operator {operator} prompt",
                           "response": f"plan of node {node}\n\n```python\n{code}```\n",
                           "reply": {"plan": f"plan of node {node}", "code": code}, "format_errors": [],
                           "calls": [call("main", 900 + node, 100 + node, cost=0.002)]}
        made.append(record)
    closing = json.loads(json.dumps(base))
    closing.update({"step": 5, "schema_version": 3, "action": None, "action_input": None, "resolved": None,
                    "status": "ended", "end_reason": "steps_limit", "compute": None, "model": None,
                    "observation": "The search ended (steps limit): 4 node(s). Submitted node 4.",
                    "search": {"submitted_node": 4, "selected_by": "validation"}})
    return made + [closing]
