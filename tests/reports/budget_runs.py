"""Run folders whose snapshots, times, tokens and costs are known, for score at a budget.

Each is a copy of a real run of the tiny task (its run.json, build copy, answers and objects)
with a hand-written trace: every step writes submission.csv as the answers shifted by a known
amount, so the MAE of each snapshot is that amount, exactly (or the file lacks the y column,
which makes it invalid)."""
from __future__ import annotations

import csv
import json
from pathlib import Path

from handmade import _copy, base_record, renamed
from mlab.snapshots import ObjectStore

BASELINE = 5.2154  # the starter's MAE in research-0, which these runs copy
INVALID = None     # a step whose submission lacks the column y


def answers(run: Path) -> list[tuple[str, float]]:
    with open(run / "private" / "answers.csv", newline="") as handle:
        return [(row["Id"], float(row["y"])) for row in csv.DictReader(handle)]


def submission(run: Path, shift: float | None) -> bytes:
    """The answers shifted by `shift` (its MAE), or a file without the y column."""
    if shift is None:
        return ("Id,wrong\n" + "".join(f"{i},1\n" for i, _ in answers(run))).encode()
    return ("Id,y\n" + "".join(f"{i},{y + shift}\n" for i, y in answers(run))).encode()


def _result(source: Path, final: dict, **fields) -> dict:
    result = json.loads((source / "result.json").read_text())
    score = final.get("score")
    gain = None if score is None else (BASELINE - score) / BASELINE
    result.update({"score": score, "improvement": gain, "success": gain is not None and gain >= 0.1,
                   "submitted": score is not None, "failure_mode": None, "detail": None,
                   "baseline": {**result["baseline"], "value": BASELINE}, **fields})
    return result


def linear_run(source: Path, target: Path, steps: list[tuple[float, int, float, float | None]],
               run_id: str, seed: int, time_limit: float = 3 * 3600.0) -> Path:
    """A linear run of `steps`: (elapsed_s at its end, tokens of its call, cost of its call (None:
    an unknown price), the MAE its submission.csv has, INVALID, or "keep": the step leaves the
    workspace alone)."""
    run = _copy(source, target)
    (run / "budgets.json").unlink(missing_ok=True)
    store = ObjectStore(run / "objects", durable=False)
    records = []
    for step, (elapsed, tokens, cost, shift) in enumerate(steps, 1):
        changed = {} if shift == "keep" else {"submission.csv": store.put_bytes(submission(run, shift))}
        records.append(base_record(step, elapsed_s=elapsed, action="Execute Script",
                                   snapshot={"changed": changed, "removed": []},
                                   model={"calls": [{"tier": "main", "model": "openai/fake", "purpose": "step",
                                                     "prompt_tokens": tokens - 10, "completion_tokens": 10,
                                                     "cost": cost}]}))
    records[-1].update(status="final", end_reason="final_answer")
    (run / "trace.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    last = next((s for *_, s in reversed(steps) if s != "keep"), INVALID)
    result = _result(source, {"score": last}, wall_time_s=steps[-1][0] + 0.5, steps=len(steps),
                     total_tokens=sum(s[1] for s in steps),
                     cost=None if any(s[2] is None for s in steps) else round(sum(s[2] for s in steps), 8),
                     end_reason="final_answer")
    (run / "result.json").write_text(json.dumps(result))
    meta = json.loads((run / "run.json").read_text())
    meta["limits"]["time"] = time_limit
    (run / "run.json").write_text(json.dumps(meta))
    return renamed(run, run_id, seed)


# (node, parent, validation, buggy, the MAE of the node's submission)
TREE = [(1, None, 0.9, False, 0.9), (2, None, None, True, INVALID), (3, 2, 0.5, False, 0.5),
        (4, 1, 0.7, False, 0.7), (5, 3, 0.4, False, 0.4)]


def tree_run(source: Path, target: Path, run_id: str, seed: int, nodes=TREE, select: str | None = None,
             holdouts: dict | None = None) -> Path:
    """A greedy search's nodes, node i finished at i seconds with 100 * i tokens; each node's
    submission has the MAE its validation says; the closing record submits the best node."""
    run = _copy(source, target)
    (run / "budgets.json").unlink(missing_ok=True)
    store = ObjectStore(run / "objects", durable=False)
    records = []
    for step, (node, parent, validation, buggy, shift) in enumerate(nodes, 1):
        digest = store.put_bytes(submission(run, shift))
        records.append(base_record(step, elapsed_s=float(step), action="improve", node=node, parent=parent,
                                   operator="draft" if parent is None else "improve", validation=validation,
                                   buggy=buggy, holdout=(holdouts or {}).get(node),
                                   snapshot={"changed": {"submission.csv": digest}, "removed": []},
                                   model={"calls": [{"tier": "main", "model": "mlab/scripted", "purpose": "draft",
                                                     "prompt_tokens": 100 * step - 10, "completion_tokens": 10,
                                                     "cost": 0.0}]}))
    valid = [n for n in nodes if not n[3] and n[2] is not None]
    best = min(valid, key=lambda n: (n[2], n[0]))
    records.append(base_record(len(records) + 1, elapsed_s=float(len(records) + 1), status="ended",
                               end_reason="steps_limit", search={"submitted_node": best[0],
                                                                 "selected_by": "validation"}))
    (run / "trace.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (run / "result.json").write_text(json.dumps(_result(
        source, {"score": best[4]}, wall_time_s=len(records) + 0.5, steps=len(nodes), cost=0.0,
        total_tokens=sum(100 * i for i in range(1, len(nodes) + 1)), end_reason="steps_limit",
        search={"policy": "greedy", "nodes": len(nodes), "valid_nodes": len(valid), "submitted_node": best[0],
                "submitted_validation": best[2], "selected_by": "validation"})))
    renamed(run, run_id, seed, "tree-greedy")
    if select:  # the search's own agent declaration, in a build of its own (no cached copy is read)
        meta = json.loads((run / "run.json").read_text())
        agent = run / "build" / "agents" / "tree-greedy" / "agent.json"
        agent.parent.mkdir(parents=True, exist_ok=True)
        # the research agent's compiled declaration made a greedy search (the copy is checked
        # against spec/agent.schema.json when a report reads it: it must be a whole declaration)
        declared = json.loads((source / "build" / "agents" / "research" / "agent.json").read_text())
        declared.update(name="tree-greedy", reply=None, templates={**declared["templates"], **{name: f"templates/{name}.j2" for name in ("draft", "improve", "debug")}}, search={
            "policy": "greedy", "params": {"drafts": 5, "debug_probability": 0.5, "max_debug_depth": 3},
            "parallel": 1, "code_file": "train.py",
            "score": {"from": "pattern", "pattern": "score: ([0-9.]+)", "group": 1}, "select": select, "operators": ["draft", "improve", "debug"]})
        agent.write_text(json.dumps(declared))
        meta["build"]["digest"] = "6" * 64
        (run / "run.json").write_text(json.dumps(meta))
    return run
