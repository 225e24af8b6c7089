"""A run read as a conversation: the agent's turns, each with its model reply, tool calls and results.

Both exports (ATIF and Inspect) start here, so they agree on what a turn is:

- A tool agent's assistant message is one turn, however many trace records its calls ran in
  (the first record holds model.message; the records after it hold model.tool_call only).
- A text agent's step (sections or JSON, the action parsed from the text) is one turn with one
  tool call, whose id the harness makes: "mlab-step-N".
- A tree-search node is one turn: its operator is the call, its script output the result.
- A record with no action (the run ended: the agent gave up, a limit was reached) is a turn
  without calls; with no model reply either it is a system event.

Every version of the trace reads the same way (the newer fields are optional).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from mlab.documents.agent import Action
from mlab.errors import RunError
from mlab.standard_json import standard
from mlab.models.decode import MAX_ARGUMENT_CHARS, loads
from mlab.models.offline import action_tool_name, tool_definition
from mlab.reports.runs import LoadedRun, load_run
from mlab.trace import TRACE, full_record, read_trace

# Record fields of a tree-search node (trace v3), kept with the turn as they are.
NODE_FIELDS = ("node", "parent", "operator", "validation", "buggy", "holdout", "search")


@dataclass
class ToolCall:
    """One call of a turn and what came back."""

    id: str
    name: str                 # the tool's name (a text agent's action: its table's tool name)
    arguments: dict           # a JSON object (a non-object input is kept as {"input": value})
    arguments_text: str | None  # a tool call's arguments exactly as the model sent them
    action: object            # the action as the agent gave it
    harness_id: bool          # the id was made by the harness (the model sent none)
    result: str               # the tool result sent back (the observation, or its summary)
    observation: str          # exactly what the agent was shown at the step
    is_error: bool
    step: int                 # the trace record that ran the call


@dataclass
class Turn:
    """One reply of the agent (or one event of the run) and the records it produced."""

    records: list[dict]
    message: str = ""              # the reply's text (a text agent's whole reply)
    reasoning: str | None = None   # the provider's reasoning text, if it sent one
    sections: list[dict] = field(default_factory=list)  # [{"name", "kind", "role", "text"}] of the reply
    calls: list[ToolCall] = field(default_factory=list)
    model_calls: list[dict] = field(default_factory=list)  # the model calls of the turn (tokens, cost)
    prompt: str | None = None
    format: str | None = None      # tools, sections or json (trace v3; None before)
    from_model: bool = True        # False: a system event (no model reply)
    shown: list[tuple[str, str]] = field(default_factory=list)  # (role, text) sent before this reply, new here

    @property
    def steps(self) -> list[int]:
        return [record["step"] for record in self.records]

    @property
    def first(self) -> dict:
        return self.records[0]

    @property
    def last(self) -> dict:
        return self.records[-1]

    def usage(self) -> dict:
        """Tokens and cost of the turn's model calls (cost None when a call's is unknown)."""
        totals = {"prompt": 0, "completion": 0, "cached": 0, "cost": 0.0}
        for call in self.model_calls:
            totals["prompt"] += _count(call.get("prompt_tokens"))
            totals["completion"] += _count(call.get("completion_tokens"))
            totals["cached"] += _count(call.get("cached_tokens"))
            cost = call.get("cost")
            totals["cost"] = None if totals["cost"] is None or not isinstance(cost, (int, float)) \
                else totals["cost"] + float(cost)
        return totals

    @property
    def main_model(self) -> str | None:
        """The model that wrote the reply (the call made for the step itself, else the last one)."""
        steps = [c for c in self.model_calls if c.get("purpose") == "step"] or self.model_calls
        return steps[-1].get("model") if steps else None


@dataclass
class RunConversation:
    """A run as its exports read it."""

    run: LoadedRun
    records: list[dict]
    turns: list[Turn]
    tools: list[dict]      # OpenAI-style definitions of the actions the agent was shown

    @property
    def result(self) -> dict | None:
        return self.run.result


def _count(value) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def read_conversation(run_dir: Path) -> RunConversation:
    """The run folder read into turns; a clear error when it is not a run or its trace is torn."""
    run_dir = Path(run_dir)
    if not run_dir.exists():
        raise RunError(f"{run_dir} does not exist; give a run folder (runs/<run-id>)")
    run = load_run(run_dir)  # a folder without a valid run.json is refused here
    contents = read_trace(run.dir / TRACE, note=False)
    if contents.problem:   # a trace from elsewhere: an export is taken as the whole run, so none is written
        raise RunError(f"{contents.problem}; nothing is exported from a damaged trace")
    if contents.torn:
        raise RunError(f"the trace of {run_dir} ends in {len(contents.torn):,} bytes that are not a complete "
                       f"record (after step {len(contents.records)}): the run was killed while writing, or "
                       f"the file is damaged. `mlab run --resume {run_dir}` sets the torn bytes aside in "
                       f"{TRACE}.torn and goes on; nothing is exported from a torn trace")
    # what a model or a script wrote, as standard JSON holds it (mlab.standard_json.standard)
    records = [standard(full_record(record, run.dir / "objects")) for record in contents.records]
    tables = _action_table(run)
    turns = _turns(records, {section.name: section for section in run.sections}, tables)
    return RunConversation(run, records, turns, _tool_definitions(tables))


def _action_table(run: LoadedRun) -> tuple[Action, ...]:
    """The actions of the run's build copy (a view of actions.json): none when the copy is missing,
    damaged or forged, and then names stay as the agent gave them."""
    table = run.actions_doc
    return table.actions if table is not None else ()


def _tool_definitions(actions: tuple[Action, ...]) -> list[dict]:
    return [tool_definition(action) for action in actions if action.shown]


def _object(value) -> dict:
    return value if isinstance(value, dict) else {} if value is None else {"input": value}


def _parsed_arguments(text) -> dict:
    if isinstance(text, dict):
        return text
    try:  # bounded (a hostile call nested thousands deep); NaN and Infinity as their standard forms
        value = standard(loads(text, what="the arguments", max_chars=MAX_ARGUMENT_CHARS)) \
            if isinstance(text, str) else text
    except ValueError:
        return {}  # not JSON, or past the bounds: the text is kept in arguments_text
    return _object(value)


def _sections(model: dict, declared: dict, node: bool) -> list[dict]:
    """The parsed reply's sections with their kind and role as the agent declares them (a section the
    build copy does not declare is taken for prose unless it is named as the action or its input; a
    tree node's reply is a plan and code)."""
    reply = model.get("reply")
    if not isinstance(reply, dict):
        return []
    found = []
    for name, text in reply.items():
        if not isinstance(text, str):
            continue
        section = declared.get(name)
        if node and name in _NODE_SECTIONS:
            kind, role = _NODE_SECTIONS[name]
        elif section:
            kind, role = section.kind, section.role
        else:
            kind, role = "action" if name in _ACTION_NAMES else "text", None
        found.append({"name": name, "kind": kind, "role": role, "text": text})
    return found


_NODE_SECTIONS = {"plan": ("text", "plan"), "code": ("code", None)}


_ACTION_NAMES = ("Action", "Action Input", "command.name", "command.args")


def _text_call(record: dict, tool_names: dict) -> ToolCall:
    resolved = record.get("resolved") if isinstance(record.get("resolved"), dict) else None
    action = record.get("action")
    if resolved and resolved.get("action") in tool_names:
        name = tool_names[resolved["action"]]
    else:
        name = action if isinstance(action, str) and action else json.dumps(action)
    observation = str(record.get("observation", ""))
    return ToolCall(id=f"mlab-step-{record['step']}", name=name,
                    arguments=_object(resolved["input"] if resolved else record.get("action_input")),
                    arguments_text=None, action=action, harness_id=True, result=observation,
                    observation=observation, is_error=record.get("status") == "error", step=record["step"])


def _native_call(record: dict, call: dict) -> ToolCall:
    result = record["model"].get("tool_result") if isinstance(record["model"].get("tool_result"), dict) else {}
    observation = str(record.get("observation", ""))
    call_id = str(call.get("id") or "")
    return ToolCall(id=call_id or f"mlab-step-{record['step']}", name=str(call.get("name", record.get("action"))),
                    arguments=_parsed_arguments(call.get("arguments")),
                    arguments_text=call.get("arguments") if isinstance(call.get("arguments"), str) else None,
                    action=record.get("action"), harness_id=not call_id,
                    result=str(result.get("content", observation)), observation=observation,
                    is_error=bool(result.get("is_error", record.get("status") == "error")), step=record["step"])


def _message_text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: keep their text
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _reasoning(message: dict) -> str | None:
    text = message.get("reasoning_content")
    if isinstance(text, str) and text:
        return text
    blocks = message.get("thinking_blocks")
    if isinstance(blocks, list):
        joined = "\n\n".join(str(b.get("thinking", "")) for b in blocks if isinstance(b, dict) and b.get("thinking"))
        return joined or None
    return None


def _turns(records: list[dict], declared: dict, actions: tuple[Action, ...]) -> list[Turn]:
    tool_names = {action.name: action_tool_name(action) for action in actions}
    turns: list[Turn] = []
    for record in records:
        model = record.get("model") if isinstance(record.get("model"), dict) else None
        tool_call = (model or {}).get("tool_call")
        if isinstance(tool_call, dict) and "message" not in model and turns and \
                tool_call.get("id") in _message_call_ids(turns[-1]):
            # a later call of the message the previous turn began: one turn, one more call
            turns[-1].records.append(record)
            turns[-1].calls.append(_native_call(record, tool_call))
            turns[-1].model_calls += _calls(model)
            continue
        replied = bool(model) and any(model.get(key) for key in ("calls", "response", "message"))
        turn = Turn(records=[record], prompt=(model or {}).get("prompt"),
                    format=(model or {}).get("format") or ("tools" if isinstance(tool_call, dict) else None),
                    model_calls=_calls(model or {}),
                    # a record with an action is the agent's (a scripted drive's has no model call)
                    from_model=replied or record.get("action") is not None)
        if model:
            message = model.get("message") if isinstance(model.get("message"), dict) else None
            turn.message = _message_text(message) if message else str(model.get("response") or "")
            turn.reasoning = _reasoning(message) if message else None
            turn.sections = _sections(model, declared, "node" in record)
        if isinstance(tool_call, dict):
            turn.calls.append(_native_call(record, tool_call))
            turn.calls += _calls_not_run(record)
        elif record.get("action") is not None:
            turn.calls.append(_text_call(record, tool_names))
        turns.append(turn)
    _external_calls(turns)
    _shown(turns)
    return turns


def _external_calls(turns: list[Turn]) -> None:
    """An outside agent's exchanges (trace v4+): each reply's tool calls as the model made them, each
    with the result the agent sent back in a later exchange (empty when the run ended first). The
    agent ran them itself, so the trace holds no record per call."""
    results: dict[str, str] = {}
    for turn in turns:
        request = (turn.first.get("model") or {}).get("request")
        messages = request.get("messages") if isinstance(request, dict) else None
        for message in messages if isinstance(messages, list) else []:
            if isinstance(message, dict) and message.get("role") == "tool" and message.get("tool_call_id"):
                results.setdefault(str(message["tool_call_id"]), _message_text(message))
    for turn in turns:
        model = turn.first.get("model") or {}
        message = model.get("message")
        if not model.get("external") or turn.calls or not isinstance(message, dict):
            continue
        for index, call in enumerate(message.get("tool_calls") or []):
            if not isinstance(call, dict):
                continue
            function = call.get("function") if isinstance(call.get("function"), dict) else {}
            arguments, call_id = function.get("arguments"), str(call.get("id") or "")
            result = results.get(call_id, "")
            turn.calls.append(ToolCall(id=call_id or f"mlab-step-{turn.first['step']}-{index + 1}",
                                       name=str(function.get("name") or ""), arguments=_parsed_arguments(arguments),
                                       arguments_text=arguments if isinstance(arguments, str) else None, action=None,
                                       harness_id=not call_id, result=result, observation=result, is_error=False,
                                       step=turn.first["step"]))


def _calls_not_run(record: dict) -> list[ToolCall]:
    """The calls of the message the harness answered without running (one action per step): the
    record lists their results as model.other_results."""
    model = record["model"]
    message = model.get("message") if isinstance(model.get("message"), dict) else {}
    sent = {c.get("id"): c for c in message.get("tool_calls") or [] if isinstance(c, dict)}
    found = []
    for other in model.get("other_results") or []:
        if not isinstance(other, dict) or other.get("tool_call_id") not in sent:
            continue
        function = sent[other["tool_call_id"]].get("function") or {}
        arguments = function.get("arguments")
        content = str(other.get("content", ""))
        found.append(ToolCall(id=str(other["tool_call_id"]), name=str(function.get("name", "")),
                              arguments=_parsed_arguments(arguments),
                              arguments_text=arguments if isinstance(arguments, str) else None, action=None,
                              harness_id=False, result=content, observation=content,
                              is_error=bool(other.get("is_error", True)), step=record["step"]))
    return found


def _calls(model: dict) -> list[dict]:
    calls = model.get("calls")
    return [call for call in calls if isinstance(call, dict)] if isinstance(calls, list) else []


def _message_call_ids(turn: Turn) -> list:
    message = (turn.first.get("model") or {}).get("message")
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    return [c.get("id") for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


# A tool agent's record holds its conversation as text: blocks "[role]" or "[tool (id)]", then the
# content, blocks apart by a blank line (mlab.agent.tool_loop.conversation_text).
_BLOCK = re.compile(r"(?:^|\n\n)\[(system|user|assistant|tool(?: \([^)\n]*\))?)\]\n")


def conversation_blocks(text: str) -> list[tuple[str, str]]:
    """(role, content) of each message of a conversation written as text."""
    parts = _BLOCK.split(text)
    if len(parts) < 3 or parts[0].strip():
        return []  # not a conversation: a text agent's prompt
    return [(role.split(" ")[0], content.rstrip("\n")) for role, content in zip(parts[1::2], parts[2::2])]


def _shown(turns: list[Turn]) -> None:
    """What each turn's reply answered that no earlier turn showed: a text agent's first prompt (later
    ones repeat it with the history); a tool agent's system message and first user messages, then
    each step's closing user message; every tree node's own prompt."""
    first = True
    for turn in turns:
        if not turn.prompt:
            continue
        blocks = conversation_blocks(turn.prompt) if turn.format == "tools" else []
        if "node" in turn.first:  # a tree node's prompt is an operator's, made for it alone
            turn.shown = [("user", turn.prompt)]
        elif not blocks:
            turn.shown = [("user", turn.prompt)] if first else []
        elif first:
            turn.shown = [(role, text) for role, text in blocks if role in ("system", "user")]
        else:
            tail = []
            for role, text in reversed(blocks):
                if role != "user":
                    break
                tail.insert(0, (role, text))
            turn.shown = tail
        first = False


def reasoning_text(turn: Turn) -> str | None:
    """ATIF's and Inspect's one reasoning text: the provider's reasoning, else the reply's text
    sections in order ("Name: text"), else None."""
    if turn.reasoning:
        return turn.reasoning
    return "\n\n".join(f"{s['name']}: {s['text']}" for s in turn.sections if s["kind"] == "text") or None


def node_facts(record: dict) -> dict:
    """The tree-search fields of a node's record (empty for any other record)."""
    if not isinstance(record.get("node"), int):
        return {}
    return {name: record[name] for name in NODE_FIELDS if name in record}
