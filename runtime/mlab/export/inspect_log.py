"""Inspect AI logs: runs as `.eval` files written through Inspect's own API (inspect_ai.log).

An Inspect log holds one task and one model, so runs are grouped by (task, agent, model): one log
per group, one sample per run, with a task_id of its own (GroupKey.ident) so that Inspect View
lists every log rather than taking those of one task for retries, and the agent in the task's
display name, arguments and tags. A sample's id is the run's data variant and its epoch counts the
runs of that variant in the group in order of seed (the seed itself is in the sample's metadata).
inspect_ai is an optional dependency (the `inspect` extra), imported only here, when the command
runs. docs/interop.md maps every field.
"""
from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mlab.errors import RunError, StorageError, UsageError, first_line
from mlab.installation import install_hint
from mlab.export.files import refuse_existing
from mlab.export.turns import RunConversation, Turn, read_conversation
from mlab.reports.runs import find_run_dirs

LOG_SUFFIX = ".eval"
SCORER = "mlab"


@dataclass(frozen=True)
class GroupKey:
    task: str
    agent: str
    model: str

    def file_name(self) -> str:
        text = f"{self.task}_{self.agent}_{self.model}"
        return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") + LOG_SUFFIX

    def ident(self, *more: str) -> str:
        """A stable id of this group (and `more`), 22 letters and digits like Inspect's own ids.
        Inspect View takes logs of one task_id in a folder for retries of one another and lists
        only the newest, so each (task, agent, model) gets its own."""
        import hashlib

        digest = int.from_bytes(hashlib.sha256("\x00".join((self.task, self.agent, self.model, *more))
                                               .encode("utf-8")).digest()[:16], "big")
        alphabet, text = "23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz", ""
        while len(text) < 22:
            digest, index = divmod(digest, len(alphabet))
            text += alphabet[index]
        return text


def _inspect():
    """inspect_ai's log, model, scorer and tool modules, or a clear error naming the extra."""
    try:
        import inspect_ai.log as log
        import inspect_ai.model as model
        import inspect_ai.scorer as scorer
        import inspect_ai.tool as tool
    except ImportError as problem:
        raise UsageError(f"--to inspect needs Inspect AI, which is not installed ({first_line(problem)}); "
                         f"install it with: {install_hint('inspect')}") from None
    return log, model, scorer, tool


def model_name(conversation: RunConversation) -> str:
    """The model a run is grouped by: the main tier's, without an offline model's file argument."""
    model = conversation.run.main_model or \
        ("none (scripted drive)" if (conversation.result or {}).get("driven") else "unknown")
    for prefix in ("mlab/scripted:", "mlab/replay:"):
        if model.startswith(prefix):
            return prefix[:-1]
    return model


def group_runs(paths: list[Path]) -> dict[GroupKey, list[RunConversation]]:
    """The runs at or under `paths`, read and grouped by (task, agent, model) in order of seed."""
    conversations, seen = [], set()
    for path in paths:
        if not Path(path).exists():
            raise UsageError(f"{path} does not exist; give run folders or folders holding runs")
        for run_dir in find_run_dirs(Path(path)):
            if run_dir.resolve() not in seen:
                seen.add(run_dir.resolve())
                conversations.append(read_conversation(run_dir))
    if not conversations:
        raise UsageError(f"no run folders (folders holding run.json) in {', '.join(str(p) for p in paths)}")
    groups: dict[GroupKey, list[RunConversation]] = {}
    for conversation in conversations:
        run = conversation.run
        groups.setdefault(GroupKey(run.task, run.agent, model_name(conversation)), []).append(conversation)
    for members in groups.values():
        members.sort(key=lambda c: (c.run.variant, c.run.seed, c.run.id))
    return groups


def _conversation(conversation: RunConversation, model, tool) -> tuple[list, list]:
    """The run in Inspect's chat messages and events.

    Messages: what the agent was first shown, then each turn's assistant message (reasoning, text,
    tool calls) and the tool results. Events (the transcript `inspect view` shows): per turn a model
    event with the input that call was sent (a text agent's or a tree node's prompt; a tool agent's
    conversation so far) and its output, then a tool event per call."""
    import inspect_ai.event as event

    messages, events = [], []
    kinds = {"system": model.ChatMessageSystem, "user": model.ChatMessageUser}
    ended = {record.get("step"): record.get("ended") for record in conversation.records}
    for turn in conversation.turns:
        messages += [kinds[role](content=text) for role, text in turn.shown]
        if not turn.from_model:
            continue  # the run's end is in the sample's metadata
        assistant = _assistant(turn, model, tool)
        if turn.model_calls:
            sent = list(messages) if turn.format == "tools" else [model.ChatMessageUser(content=turn.prompt or "")]
            usage = turn.usage()
            output = model.ModelOutput(
                model=turn.main_model or "unknown", choices=[model.ChatCompletionChoice(
                    message=assistant, stop_reason="tool_calls" if turn.calls else "stop")],
                usage=model.ModelUsage(input_tokens=usage["prompt"], output_tokens=usage["completion"],
                                       total_tokens=usage["prompt"] + usage["completion"],
                                       input_tokens_cache_read=usage["cached"], total_cost=usage["cost"]))
            events.append(event.ModelEvent(model=turn.main_model or "unknown", input=sent, tools=[],
                                           tool_choice="auto" if turn.format == "tools" else "none",
                                           config=model.GenerateConfig(), output=output,
                                           timestamp=turn.first.get("started")))
        messages.append(assistant)
        for call in turn.calls:
            error = tool.ToolCallError("unknown", call.result) if call.is_error else None
            messages.append(model.ChatMessageTool(content=call.result, tool_call_id=call.id, function=call.name,
                                                  error=error, metadata={"trace_step": call.step}))
            events.append(event.ToolEvent(id=call.id, function=call.name, arguments=call.arguments,
                                          result=call.result, error=error,
                                          timestamp=ended.get(call.step)))
    return messages, events


def _assistant(turn: Turn, model, tool):
    content = turn.message
    if turn.reasoning:  # the provider's reasoning: a text agent's sections are in its reply text already
        content = [model.ContentReasoning(reasoning=turn.reasoning), model.ContentText(text=turn.message)]
    calls = [tool.ToolCall(id=call.id, function=call.name, arguments=call.arguments) for call in turn.calls] or None
    metadata = {"trace_steps": turn.steps}
    if turn.sections:
        metadata["sections"] = turn.sections
    if turn.format:
        metadata["format"] = turn.format
    return model.ChatMessageAssistant(content=content, tool_calls=calls, model=turn.main_model, metadata=metadata)


def _usage(conversation: RunConversation, model) -> dict:
    """Per model: tokens and cost of every model call of the run."""
    usage: dict[str, dict] = {}
    for turn in conversation.turns:
        for call in turn.model_calls:
            name = str(call.get("model") or "unknown")
            totals = usage.setdefault(name, {"prompt": 0, "completion": 0, "cached": 0, "cost": 0.0})
            for key, field_name in (("prompt", "prompt_tokens"), ("completion", "completion_tokens"),
                                    ("cached", "cached_tokens")):
                value = call.get(field_name)
                totals[key] += int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0
            cost = call.get("cost")
            totals["cost"] = None if totals["cost"] is None or not isinstance(cost, (int, float)) \
                else totals["cost"] + float(cost)
    return {name: model.ModelUsage(input_tokens=t["prompt"], output_tokens=t["completion"],
                                   total_tokens=t["prompt"] + t["completion"], input_tokens_cache_read=t["cached"],
                                   total_cost=t["cost"])
            for name, t in usage.items()}


def _final_answer(conversation: RunConversation) -> str | None:
    for record in reversed(conversation.records):
        resolved = record.get("resolved")
        if isinstance(resolved, dict) and resolved.get("primitive") == "final_answer":
            answer = (resolved.get("input") or {}).get("final_answer")
            return answer if isinstance(answer, str) else None
    return None


def _scores(conversation: RunConversation, scorer) -> dict | None:
    """success (C or I), the metric's score and the improvement over the baseline, as Inspect scores."""
    result = conversation.result
    if result is None:
        return None
    facts = {key: result.get(key) for key in ("metric", "direction", "baseline", "threshold", "failure_mode",
                                              "end_reason", "submitted")}
    gain, threshold = result.get("improvement"), result.get("threshold")
    explanation = result.get("detail") or result.get("failure_mode") or (
        f"improvement {gain:+.1%} over the baseline, threshold {threshold:.0%}"
        if isinstance(gain, (int, float)) and isinstance(threshold, (int, float)) else "")
    scores = {"success": scorer.Score(value=scorer.CORRECT if result.get("success") else scorer.INCORRECT,
                                      answer=_final_answer(conversation), explanation=explanation, metadata=facts)}
    if isinstance(result.get("score"), (int, float)):
        scores["score"] = scorer.Score(value=result["score"], explanation=f"{result.get('metric')} "
                                       f"({str(result.get('direction', '')).replace('_', ' ')})")
    if isinstance(result.get("improvement"), (int, float)):
        scores["improvement"] = scorer.Score(value=result["improvement"],
                                             explanation="relative improvement over the task's baseline")
    return scores


def _target(conversation: RunConversation) -> str:
    result = conversation.result or {}
    if not result:
        return "improve on the task's baseline"
    threshold = result.get("threshold")
    baseline = (result.get("baseline") or {}).get("value")
    where = f" over the baseline {baseline:.6g}" if isinstance(baseline, (int, float)) else ""
    by = f" by at least {threshold:.0%}" if isinstance(threshold, (int, float)) else ""
    return f"improve {result.get('metric')} ({str(result.get('direction', '')).replace('_', ' ')}){by}{where}"


def _sample(conversation: RunConversation, epoch: int, log, model, scorer, tool):
    run, result = conversation.run, conversation.result
    messages, events = _conversation(conversation, model, tool)
    last = next((m for m in reversed(messages) if m.role == "assistant"), None)
    output = model.ModelOutput(model=model_name(conversation),
                               choices=[model.ChatCompletionChoice(message=last, stop_reason="stop")] if last else [])
    records = conversation.records
    metadata = {"run_id": run.id, "run_dir": str(run.dir), "seed": run.seed, "data_variant": run.variant,
                "agent": run.agent, "models": run.tiers, "demo": run.demo, "finished": run.finished,
                "steps": len(records), "result": result}
    sample = {"id": run.variant, "epoch": epoch, "input": run.problem or (messages[0].text if messages else ""),
              "target": _target(conversation), "messages": messages, "events": events, "output": output,
              "scores": _scores(conversation, scorer), "metadata": metadata, "model_usage": _usage(conversation, model),
              "started_at": run.meta.get("created"), "uuid": run.id}
    if records:
        sample["completed_at"] = records[-1].get("ended")
    if result is not None and isinstance(result.get("wall_time_s"), (int, float)):
        sample["total_time"] = float(result["wall_time_s"])
    if result is None:
        sample["error"] = log.EvalError(message=f"run {run.id} has no result.json: it has not finished "
                                        f"(`mlab run --resume {run.dir}` goes on with it)",
                                        traceback="", traceback_ansi="")
    return log.EvalSample(**sample)


def _results(samples: list, log) -> object:
    def mean(values):
        return sum(values) / len(values) if values else 0.0

    scored = [s for s in samples if s.scores]
    scores = [log.EvalScore(name="success", scorer=SCORER, scored_samples=len(scored),
                            unscored_samples=len(samples) - len(scored),
                            metrics={"accuracy": log.EvalMetric(
                                name="accuracy", value=mean([float(s.scores["success"].value == "C") for s in scored]))})]
    for name in ("score", "improvement"):
        values = [float(s.scores[name].value) for s in scored if name in s.scores]
        if values:
            scores.append(log.EvalScore(name=name, scorer=SCORER, scored_samples=len(values),
                                        unscored_samples=len(samples) - len(values),
                                        metrics={"mean": log.EvalMetric(name="mean", value=mean(values))}))
    return log.EvalResults(total_samples=len(samples), completed_samples=len(scored), scores=scores)


def eval_log(key: GroupKey, conversations: list[RunConversation]):
    """The Inspect EvalLog of one group of runs."""
    log, model, scorer, tool = _inspect()
    epochs: dict[str, int] = {}
    samples = []
    for conversation in conversations:
        variant = conversation.run.variant
        epochs[variant] = epochs.get(variant, 0) + 1
        samples.append(_sample(conversation, epochs[variant], log, model, scorer, tool))
    first = conversations[0].run
    created = min(c.run.meta.get("created") or "" for c in conversations) or None
    ended = [c.records[-1].get("ended") for c in conversations if c.records]
    usage: dict[str, object] = {}
    for sample in samples:
        for name, used in sample.model_usage.items():
            usage[name] = usage[name] + used if name in usage else used
    unfinished = [c.run.id for c in conversations if c.result is None]
    runs = [c.run.id for c in conversations]
    seeds = sorted({c.run.seed for c in conversations})
    spec = log.EvalSpec(
        created=created or "", task=key.task, task_id=key.ident(), eval_id=key.ident(*runs),
        run_id=key.ident("runs", *runs), task_display_name=f"{key.task} / {key.agent}",
        task_args={"agent": key.agent, "data": sorted(epochs), "seeds": seeds},
        tags=[f"agent:{key.agent}", *(f"data:{v}" for v in sorted(epochs))],
        solver=key.agent, model=key.model,
        dataset=log.EvalDataset(name=key.task, samples=len(epochs), sample_ids=sorted(epochs)),
        config=log.EvalConfig(epochs=max(epochs.values())),
        metadata={"harness": "mlab", "agent": key.agent, "runs": runs, "seeds": seeds,
                  "reply_format": first.declared_format},
        packages={"mlab-harness": first.meta.get("mlab_version") or "unknown"})
    plan = log.EvalPlan(name=key.agent, steps=[log.EvalPlanStep(solver=key.agent, params={"models": first.tiers})])
    document = {"eval": spec, "plan": plan, "samples": samples, "results": _results(samples, log),
                "stats": log.EvalStats(started_at=created or "", completed_at=max(ended) if ended else "",
                                       model_usage=usage),
                "status": "error" if unfinished else "success"}
    if unfinished:
        document["error"] = log.EvalError(message=f"{len(unfinished)} run(s) have not finished: "
                                          f"{', '.join(unfinished)}", traceback="", traceback_ansi="")
    return log.EvalLog(**document)


def _write(log_module, document, path: Path) -> None:
    """One .eval file written by Inspect, whole or not at all, never over an existing file."""
    import os

    refuse_existing(path)
    with tempfile.TemporaryDirectory(prefix=".mlab-export-", dir=path.parent) as scratch:
        partial = Path(scratch) / path.name
        try:
            log_module.write_eval_log(document, str(partial), format="eval")
            os.link(partial, path)
        except FileExistsError:
            raise UsageError(f"{path} already exists; give a new path (an export never overwrites)") from None
        except OSError as problem:
            raise StorageError(f"cannot write {path}: {problem.strerror or problem}") from None
        except (ValueError, TypeError) as problem:  # Inspect could not serialise the log
            raise RunError(f"Inspect could not write {path}: {first_line(problem)}") from None


def write_inspect(paths: list[Path], output: Path | None) -> list[str]:
    """`mlab export RUN... --to inspect -o FILE.eval|DIR`: the logs, and the lines saying what was written."""
    log, _, _, _ = _inspect()
    if output is None:
        raise UsageError("--to inspect writes files: give -o FILE.eval (one task, agent and model) "
                         "or -o DIR (a new folder, one log per task, agent and model)")
    groups = group_runs(paths)
    output = Path(output)
    if output.suffix == LOG_SUFFIX:
        if len(groups) > 1:
            names = "; ".join(f"{k.task} / {k.agent} / {k.model}" for k in groups)
            raise UsageError(f"these runs make {len(groups)} Inspect logs (one per task, agent and model: {names}); "
                             f"give -o DIR, a new folder, to write them all")
        targets = {next(iter(groups)): output}
    else:
        refuse_existing(output)
        targets = {key: output / key.file_name() for key in groups}
    documents = {}
    for key, members in groups.items():  # all built before anything is written
        try:
            documents[key] = eval_log(key, members)
        except ValueError as problem:  # Inspect's models refused a value (pydantic's ValidationError)
            raise RunError(f"cannot make the Inspect log of {key.task} / {key.agent} / {key.model} "
                           f"({', '.join(c.run.id for c in members)}): {first_line(problem)}") from None
    if output.suffix != LOG_SUFFIX:
        try:
            output.mkdir()
        except OSError as problem:
            raise StorageError(f"cannot make {output}: {problem.strerror or problem}") from None
    lines = []
    for key, path in targets.items():
        _write(log, documents[key], path)
        samples = documents[key].samples or []
        lines.append(f"wrote {path}: Inspect log of {key.task} / {key.agent} / {key.model}, "
                     f"{len(samples)} sample(s) (one per run)")
    return lines
