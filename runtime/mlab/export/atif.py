"""ATIF: a run as one Agent Trajectory Interchange Format document (Harbor's format, v1.8).

The document is built as plain JSON here (the `atif` package's pydantic models are the test's
check, not a dependency). Field mapping (docs/interop.md has it in full):

    run                    Trajectory: schema_version, session_id = run id, agent, final_metrics
    first prompt           step 1, source "user" (a tool agent: "system" prompt, then "user" messages)
    agent turn             source "agent": message, reasoning_content, tool_calls, observation, metrics
    run ended, no reply    source "system": the end reason
    mlab's own facts       "extra" of the trajectory, agent, steps and tool calls

ATIF step ids are sequential from 1; the trace's step numbers, tree parents and node numbers
are kept in each step's extra.
"""
from __future__ import annotations

import json
from pathlib import Path

from mlab.documents.view import thaw
from mlab.errors import UsageError
from mlab.export.files import write_new
from mlab.standard_json import json_text
from mlab.export.turns import RunConversation, Turn, node_facts, read_conversation, reasoning_text

ATIF_VERSION = "ATIF-v1.8"
KNOWN_VERSIONS = ("ATIF-v1.8",)  # the versions this exporter knows how to write


def trajectory(run_dir: Path, version: str = ATIF_VERSION) -> dict:
    """The ATIF document of one run folder."""
    if version not in KNOWN_VERSIONS:
        raise UsageError(f"ATIF version {version!r} is not one this mlab writes; it writes "
                         f"{', '.join(KNOWN_VERSIONS)}")
    return _trajectory(read_conversation(run_dir), version)


def _trajectory(conversation: RunConversation, version: str) -> dict:
    run, result = conversation.run, conversation.result
    steps: list[dict] = []
    node_steps: dict[int, int] = {}  # tree node → its ATIF step id
    scores = {row.get("step"): row for row in (run.scores or []) if isinstance(row, dict)}
    for turn in conversation.turns:
        for role, text in turn.shown:  # what the agent was shown before this reply, new here
            steps.append({"step_id": len(steps) + 1, "source": role, "message": text})
        step = _step(turn, len(steps) + 1, scores, node_steps)
        if "node" in turn.first and isinstance(turn.first["node"], int):
            node_steps[turn.first["node"]] = step["step_id"]
        steps.append(step)
    agent = {"name": run.agent, "version": run.meta.get("mlab_version") or "unknown",
             "extra": {"harness": "mlab", "reply_format": _reply_format(run),
                       "sections": [{"name": s.name, "kind": s.kind, "role": s.role} for s in run.sections],
                       "models": run.tiers}}
    if run.main_model:
        agent["model_name"] = run.main_model
    search = run.agent_doc.search if run.agent_doc is not None else None
    if search is not None:  # a tree search calls operators, not the action table's tools
        agent["extra"]["search"] = thaw(search)
    elif conversation.tools:
        agent["tool_definitions"] = conversation.tools
    document = {"schema_version": version, "session_id": run.id, "agent": agent, "steps": steps,
                "final_metrics": _final_metrics(conversation.turns, len(steps), result),
                "extra": _run_extra(conversation)}
    if run.demo:
        document["notes"] = "A demonstration by mlab's keyless demo model (mlab/demo), not an agent's result."
    return document


def _reply_format(run) -> str | None:
    return run.declared_format


def _metrics(turn: Turn) -> dict:
    usage = turn.usage()
    metrics = {"prompt_tokens": usage["prompt"], "completion_tokens": usage["completion"],
               "cached_tokens": usage["cached"]}
    if usage["cost"] is not None:
        metrics["cost_usd"] = round(usage["cost"], 10)
    metrics["extra"] = {"calls": [{key: call.get(key) for key in ("tier", "model", "purpose", "prompt_tokens",
                                                                  "completion_tokens", "cached_tokens", "cost",
                                                                  "latency_s", "attempts", "usage_reported")
                                   if key in call} for call in turn.model_calls]}
    return metrics


def _step(turn: Turn, step_id: int, scores: dict, node_steps: dict) -> dict:
    record = turn.last
    extra: dict = {"trace_steps": turn.steps, "status": record.get("status"), "end_reason": record.get("end_reason"),
                   "snapshot": [r.get("snapshot") for r in turn.records], "started": turn.first.get("started"),
                   "ended": record.get("ended"), "duration_s": sum(float(r.get("duration_s") or 0) for r in turn.records)}
    model = turn.first.get("model") if isinstance(turn.first.get("model"), dict) else {}
    if turn.sections:
        extra["sections"] = turn.sections
    if turn.format:
        extra["format"] = turn.format
    if turn.prompt and turn.format != "tools" and not turn.shown:  # a text agent's, re-rendered with the history
        extra["prompt"] = turn.prompt
    for name in ("format_errors", "summaries"):
        if model.get(name):
            extra[name] = model[name]
    computes = [r["compute"] for r in turn.records if r.get("compute")]
    if computes:
        extra["compute"] = computes
    if any(r.get("research_log") for r in turn.records):
        extra["research_log"] = "".join(r.get("research_log") or "" for r in turn.records)
    hooks = [r["hooks"] for r in turn.records if r.get("hooks")]
    if hooks:
        extra["hooks"] = hooks
    step_scores = [scores[n] for n in turn.steps if n in scores]
    if step_scores:
        extra["scores"] = step_scores
    facts = node_facts(turn.first)
    if "search" in record and not facts:  # a tree search's closing record: what it submitted
        extra["search"] = record["search"]
    if facts:
        extra["tree"] = facts
        parent = facts.get("parent")
        extra["tree"]["parent_step_id"] = node_steps.get(parent) if isinstance(parent, int) else None
    if not turn.from_model:
        ended = record.get("end_reason") or record.get("status")
        return {"step_id": step_id, "timestamp": turn.first.get("started"), "source": "system",
                "message": str(record.get("observation") or f"the run ended: {ended}"), "extra": extra}
    step = {"step_id": step_id, "timestamp": turn.first.get("started"), "source": "agent",
            "message": turn.message, "llm_call_count": len(turn.model_calls)}
    if turn.main_model:
        step["model_name"] = turn.main_model
    reasoning = reasoning_text(turn)
    if reasoning and turn.model_calls:
        step["reasoning_content"] = reasoning
    if turn.model_calls:
        step["metrics"] = _metrics(turn)
    if turn.calls:
        step["tool_calls"] = [_tool_call(call) for call in turn.calls]
        step["observation"] = {"results": [
            {"source_call_id": call.id, "content": call.result,
             "extra": {"is_error": call.is_error, "trace_step": call.step,
                       **({"observation": call.observation} if call.observation != call.result else {})}}
            for call in turn.calls]}
    elif record.get("observation"):
        step["observation"] = {"results": [{"content": str(record["observation"])}]}
    step["extra"] = extra
    return step


def _tool_call(call) -> dict:
    extra = {"action": call.action, "harness_id": call.harness_id}
    if call.arguments_text is not None:
        extra["arguments_text"] = call.arguments_text
    return {"tool_call_id": call.id, "function_name": call.name, "arguments": call.arguments, "extra": extra}


def _final_metrics(turns: list[Turn], total_steps: int, result: dict | None) -> dict:
    prompt = completion = cached = 0
    cost: float | None = 0.0
    for turn in turns:
        usage = turn.usage()
        prompt, completion, cached = prompt + usage["prompt"], completion + usage["completion"], cached + usage["cached"]
        cost = None if cost is None or usage["cost"] is None else cost + usage["cost"]
    metrics = {"total_prompt_tokens": prompt, "total_completion_tokens": completion, "total_cached_tokens": cached,
               "total_steps": total_steps,
               "extra": {"model_calls": sum(len(t.model_calls) for t in turns),
                         "trace_records": sum(len(t.records) for t in turns)}}
    if cost is not None:
        metrics["total_cost_usd"] = round(cost, 10)
    if result is not None:
        metrics["extra"]["result_tokens"] = result.get("tokens")
        metrics["extra"]["result_cost"] = result.get("cost")
    return metrics


def _run_extra(conversation: RunConversation) -> dict:
    run = conversation.run
    meta = run.meta
    versions = sorted({r.get("schema_version", 1) for r in conversation.records}) or [None]
    extra = {"run_id": run.id, "task": run.task, "data_variant": run.variant, "seed": run.seed,
             "created": meta.get("created"), "mlab_version": meta.get("mlab_version"),
             "compiler_version": meta.get("compiler_version"), "build_digest": (meta.get("build") or {}).get("digest"),
             "limits": meta.get("limits"), "initial_snapshot": meta.get("initial_snapshot"),
             "trace_versions": versions, "finished": run.finished, "result": conversation.result}
    if run.scores:
        initial = [row for row in run.scores if isinstance(row, dict) and row.get("step") == 0]
        if initial:
            extra["initial_score"] = initial[0]
    return extra


def write_atif(run_dirs: list[Path], output: Path | None) -> list[str]:
    """`mlab export RUN --to atif [-o FILE]`: the trajectory to FILE (new), or to stdout.
    Returns the lines to tell the user (none when the document went to stdout)."""
    if len(run_dirs) != 1:
        raise UsageError(f"--to atif exports one run at a time (an ATIF file holds one trajectory); "
                         f"{len(run_dirs)} were given")
    document = trajectory(run_dirs[0])
    text = json_text(document)
    if output is None:
        return [text.rstrip("\n")]
    write_new(output, text.encode("utf-8"))
    steps = document["steps"]
    return [f"wrote {output}: ATIF trajectory ({ATIF_VERSION}) of run {document['session_id']}, "
            f"{len(steps)} steps ({sum(s['source'] == 'agent' for s in steps)} by the agent)"]
