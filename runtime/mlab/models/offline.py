"""Offline models: the `mlab/` models a ModelClient answers itself, with no provider, no
litellm and no network.

- `mlab/scripted:PATH`  replies read from a JSON list, one per call, in order: a string, or an
                        assistant message {"content": ..., "tool_calls": [{"name", "arguments"}]}
- `mlab/replay:RUN_DIR` the replies recorded in a run's trace, per tier, in order
- `mlab/human`          shows the prompt and reads the reply from the terminal
- `mlab/demo`           plays the task's demonstration (a keyless demonstration, not an
                        agent result), each step rendered in the running agent's reply
                        format; without a demonstration it lists files, runs the starter
                        and submits

What a run plays lives in an OfflineModels object its ModelClient owns: the demonstration and
the running agent's reply format, and per model name and tier how many replies were used, so
that a resumed run continues at the next reply (`OfflineModels.set_position`).
`OfflineModels.respond` answers one call in the shape mlab.models.response reads from a
provider's response (`OfflineResponse`), so that a reply is read, counted and recorded as a
provider's is.

A chat call with tools (a tool agent's step) gets an assistant message: `reply_message` returns
{"content": text or None, "tool_calls": [{"id", "name", "arguments"}]}, arguments being an object
or the JSON text as a model would send it.
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from types import SimpleNamespace

from mlab.text import printable
from mlab.documents.agent import Action, Reply, Section, TextReply
from mlab.documents.view import thaw
from mlab.models.decode import FILE_CHARS, loads
from mlab.models.demonstration import Demonstration, DemoStep
from mlab.models.errors import RepliesExhausted
from mlab.models.tree_demo import PURPOSES as TREE_PURPOSES, TreeDemo


class OfflineModel:
    """Base: a sequence of replies per tier with a position each."""

    def __init__(self, name: str):
        self.name = name
        self.position: dict[str, int] = {}

    def queue(self, tier: str) -> list[str]:
        raise NotImplementedError

    def reply(self, tier: str, purpose: str, prompt: str) -> str:
        queue = self.queue(tier)
        index = self.position.get(tier, 0)
        if index >= len(queue):
            whose = "" if tier == "all" else f" for the {tier} model"
            raise RepliesExhausted(f"{self.name} has no reply left{whose} "
                                   f"(it had {len(queue)}; reply {index + 1} was asked for)")
        self.position[tier] = index + 1
        return queue[index]

    def reply_message(self, tier: str, purpose: str, messages: list[dict], tools: list[dict]) -> dict:
        """The assistant message for a chat call with tools; by default the text reply as content."""
        entry = self.reply(tier, purpose, last_text(messages))
        return entry if isinstance(entry, dict) else {"content": entry}


def last_text(messages: list[dict]) -> str:
    """The text of a conversation's last message (what a text-only offline model answers)."""
    content = messages[-1].get("content") if messages else ""
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def check_message_entry(entry, where: str) -> dict:
    """A scripted or replayed assistant message, checked: {"content": str|None, "tool_calls": [...]}."""
    unknown = set(entry) - {"content", "tool_calls"}
    if unknown:
        raise RepliesExhausted(f"{where} has unknown field(s) {', '.join(sorted(unknown))}; a reply object has "
                               "\"content\" and \"tool_calls\"")
    if entry.get("content") is not None and not isinstance(entry["content"], str):
        raise RepliesExhausted(f"{where}: \"content\" must be a text")
    calls = entry.get("tool_calls", [])
    if not isinstance(calls, list) or not all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in calls):
        raise RepliesExhausted(f"{where}: \"tool_calls\" must be a list of {{\"name\": ..., \"arguments\": {{...}}}}")
    return entry

class Scripted(OfflineModel):
    """All tiers share one list: the file holds every reply the run will ask for, in order."""

    def __init__(self, name: str, path: str):
        super().__init__(name)
        try:
            replies = loads(Path(path).read_text(encoding="utf-8"), what="the file", max_chars=FILE_CHARS)
        except OSError as error:
            raise RepliesExhausted(f"cannot read scripted replies from {path}: {error.strerror or error}") from None
        except ValueError as error:
            raise RepliesExhausted(f"{path} is not valid JSON: {error}") from None
        if not isinstance(replies, list) or not all(isinstance(r, (str, dict)) for r in replies):
            raise RepliesExhausted(f"{path} must hold a JSON list of strings (or of reply objects "
                                   "{\"content\": ..., \"tool_calls\": [...]})")
        for index, entry in enumerate(replies):
            if isinstance(entry, dict):
                check_message_entry(entry, f"{path}: reply {index + 1}")
        self.replies = replies

    def reply(self, tier: str, purpose: str, prompt: str) -> str:
        entry = super().reply("all", purpose, prompt)
        return entry.get("content") or "" if isinstance(entry, dict) else entry

    def reply_message(self, tier: str, purpose: str, messages: list[dict], tools: list[dict]) -> dict:
        entry = super().reply("all", purpose, last_text(messages))
        return entry if isinstance(entry, dict) else {"content": entry}

    def queue(self, tier: str) -> list[str]:
        return self.replies


class Replay(OfflineModel):
    """Replies recorded in RUN_DIR/trace.jsonl, per tier, in the order they were made."""

    def __init__(self, name: str, run_dir: str):
        super().__init__(name)
        from mlab.errors import RunError
        from mlab.trace import TRACE, full_record, read_trace

        trace = Path(run_dir) / TRACE
        if not trace.is_file():
            raise RepliesExhausted(f"cannot replay {run_dir}: it has no {TRACE}")
        try:
            records = read_trace(trace).records  # lines end at b"\n" only: replies may hold other line breaks
        except RunError as error:
            raise RepliesExhausted(f"cannot replay {run_dir}: {error}") from None
        self.by_tier: dict[str, list] = {}  # a text, or the assistant message of a chat call
        objects = Path(run_dir) / "objects"
        for record in records:
            try:  # a long reply is kept in objects/ and the record holds a preview (trace version 2)
                record = full_record(record, objects)
            except RunError as error:
                raise RepliesExhausted(f"cannot replay {run_dir}: {error}") from None
            for call in (record.get("model") or {}).get("calls", []):
                message = call.get("message")
                entry = _replayed(message) if isinstance(message, dict) else call.get("response") or ""
                self.by_tier.setdefault(call.get("tier", "main"), []).append(entry)

    def queue(self, tier: str) -> list:
        return self.by_tier.get(tier, [])

    def reply(self, tier: str, purpose: str, prompt: str) -> str:
        entry = super().reply(tier, purpose, prompt)
        return entry.get("content") or "" if isinstance(entry, dict) else entry

    def reply_message(self, tier: str, purpose: str, messages: list[dict], tools: list[dict]) -> dict:
        entry = super().reply(tier, purpose, last_text(messages))
        return entry if isinstance(entry, dict) else {"content": entry}


def _replayed(message: dict) -> dict:
    """A recorded assistant message as an offline reply: its text and its tool calls, ids and the
    arguments' text as they were sent."""
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        calls.append({"id": call.get("id"), "name": function.get("name") or "",
                      "arguments": function.get("arguments") or ""})
    return {"content": message.get("content"), "tool_calls": calls}


class Human(OfflineModel):
    """Interactive: the prompt goes to stdout, the reply is read until a line with a single '.'.
    With tools, the conversation's new messages and the tools are shown, and a line
    `call NAME {JSON arguments}` makes a tool call; the other lines are the message's text."""

    shown = 0  # how many messages of the conversation were shown already
    _first: list = []  # the conversation's first message when they were shown (a new conversation shows all)

    def reply(self, tier: str, purpose: str, prompt: str) -> str:
        print(f"\n===== prompt for the {tier} model ({purpose}) =====\n{printable(prompt)}\n"
              "===== type the reply; end with a line holding only '.' =====", flush=True)
        return self._read()

    def reply_message(self, tier: str, purpose: str, messages: list[dict], tools: list[dict]) -> dict:
        start = self.shown if self.shown < len(messages) and messages[:1] == self._first else 0
        self._first, self.shown = messages[:1], len(messages)
        print(f"\n===== conversation for the {tier} model ({purpose}) =====", flush=True)
        for message in messages[start:]:
            print(f"--- {message.get('role')}{' ' + message['tool_call_id'] if message.get('tool_call_id') else ''}"
                  f" ---\n{printable(last_text([message]))}", flush=True)
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                print(printable(f"call {function.get('name')} {function.get('arguments')}"), flush=True)
        print("===== tools =====", flush=True)
        for tool in tools:
            function = tool.get("function") or {}
            print(f"{function.get('name')} {json.dumps((function.get('parameters') or {}).get('properties') or {})}\n"
                  f"    {(function.get('description') or '').splitlines()[0] if function.get('description') else ''}",
                  flush=True)
        print("===== type the reply: text, and `call NAME {JSON arguments}` lines; end with a line "
              "holding only '.' =====", flush=True)
        text, calls = [], []
        for line in self._read().splitlines(True):
            if line.startswith("call "):
                name, _, arguments = line[5:].strip().partition(" ")
                calls.append({"name": name, "arguments": arguments.strip() or "{}"})
            else:
                text.append(line)
        return {"content": "".join(text).strip() or None, "tool_calls": calls}

    def _read(self) -> str:
        lines = []
        for line in sys.stdin:
            if line.rstrip("\n") == ".":
                break
            lines.append(line)
        else:
            if not lines:
                raise RepliesExhausted("no reply on standard input (end of input)")
        return "".join(lines)


class Demo(OfflineModel):
    """Plays the task's demonstration for the main tier, each step rendered in the running agent's
    reply format (a version-1 demonstration: its replies as written); other tiers get a labelled
    stand-in. For a tool agent a step is a tool call (the step's action by its tool name, its
    input as arguments) with the agent's text sections as the message's text; asked for text
    (the agent's fallback format), the step is rendered in the fallback format."""

    def __init__(self, name: str, demonstration: Demonstration | None, starter_script: str,
                 reply_format: Reply | None = None, tool_names: dict | None = None):
        super().__init__(name)
        self.tree = TreeDemo(demonstration, name)  # a search agent's operators: the variants
        demonstration = demonstration if demonstration is not None else fallback_demo(starter_script)
        reply_format = reply_format or research_reply()
        self.tools_format = reply_format if reply_format.format == "tools" else None
        self.tool_names = dict(tool_names or {})
        self.steps = list(demonstration.steps)
        if demonstration.replies is not None:
            self.replies = list(demonstration.replies)
        else:
            text_format = (reply_format.fallback or research_reply()) if self.tools_format else reply_format
            self.replies = [render_step(step, text_format) for step in demonstration.steps]

    def queue(self, tier: str) -> list[str]:
        return self.replies

    def reply(self, tier: str, purpose: str, prompt: str) -> str:
        if purpose in TREE_PURPOSES:
            return self.tree.reply(purpose, prompt)
        if tier != "main":
            self.position[tier] = self.position.get(tier, 0) + 1
            return demo_helper_reply(purpose, prompt)
        return super().reply(tier, purpose, prompt)

    def reply_message(self, tier: str, purpose: str, messages: list[dict], tools: list[dict]) -> dict:
        if purpose in TREE_PURPOSES:
            return self.tree.message(purpose, last_text(messages), tools)
        index = self.position.get(tier, 0)
        text = self.reply(tier, purpose, last_text(messages))  # moves the position, or says none is left
        if tier != "main" or not self.steps or self.tools_format is None:
            return {"content": text}
        step = self.steps[index]
        sections = [s for s in self.tools_format.sections if s.kind == "text"]
        content = "\n".join(f"{s.name}: {step.sections.get(s.role or '', '').strip() or NEUTRAL_TEXT}"
                            for s in sections)
        return {"content": content or None,
                "tool_calls": [{"name": self.tool_names.get(step.action) or tool_name(step.action),
                                "arguments": step.input}]}


def tool_name(action: str) -> str:
    """An action's default tool name, by mlabc's rule (List Files -> list_files), for tables made
    before tool calling; a name with no letter or digit becomes "action"."""
    from mlabc.names import snake_case

    return snake_case(action) or "action"


def action_tool_name(action: Action) -> str:
    """The tool name an action is called by: its table's, or the default made from its name (a
    table from before tool calling has none)."""
    return action.tool_name or tool_name(action.name)


def tool_definition(action: Action) -> dict:
    """The provider tool of an action: the table's own (mlabc writes it), or, for a table from
    before tool calling, one made as mlabc makes it — the tool name, the description with the
    returns text, the input schema."""
    if action.tool:
        return thaw(action.tool)
    description = action.description.strip()
    returns = action.returns.strip()
    if returns:
        description = f"{description}\n\nReturns: {returns}".strip()
    return {"type": "function", "function": {
        "name": action_tool_name(action), "description": description,
        "parameters": thaw(action.input_schema) or {"type": "object", "properties": {}}}}


def research_reply() -> TextReply:
    """The research agent's reply format: what a demonstration is rendered in when no agent's is known."""
    return TextReply("sections", tuple(Section(name, kind, role, "") for name, kind, role in (
        ("Reflection", "text", "reflection"), ("Research Plan and Status", "text", "plan"),
        ("Fact Check", "text", "fact-check"), ("Thought", "text", "thought"),
        ("Action", "action", None), ("Action Input", "json", None))))
NEUTRAL_TEXT = "(demonstration) —"  # a declared section the step has no text for


def render_step(step: DemoStep, reply_format: Reply | TextReply) -> str:
    """The reply that the agent's declared format expects for one demonstration step: labelled
    `Name:` sections in declared order, or for `respond json` one object with the dotted fields."""
    def value(section: Section):
        if section.kind == "action":
            return step.action
        if section.kind == "json":
            return step.input
        text = step.sections.get(section.role or "", "").strip()
        return text or NEUTRAL_TEXT

    if reply_format.format == "json":
        document: dict = {}
        for section in reply_format.sections:
            *parents, leaf = section.name.split(".")
            node = document
            for key in parents:
                node = node.setdefault(key, {})
            node[leaf] = value(section)
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    lines = []
    for section in reply_format.sections:
        shown = value(section)
        lines.append(f"{section.name}: {json.dumps(shown, ensure_ascii=False) if section.kind == 'json' else shown}")
    return "\n".join(lines) + "\n"


def fallback_demo(script: str) -> Demonstration:
    """For a task without a demonstration: list files, run the starter, submit."""
    def step(thought: str, action: str, payload: dict) -> DemoStep:
        return DemoStep(action, payload, {
            "reflection": f"(demo model) {thought}",
            "plan": "(demo model) list files, run the starter, submit its output.",
            "fact-check": "nothing is claimed.", "thought": thought,
            "criticism": "(demo model) this only replays the starter; it does not try to improve it.",
            "speak": f"(demo model) {thought}"})
    return Demonstration((step("see what the workspace holds", "List Files", {"dir_path": "."}),
                          step("run the starter script as given", "Execute Script", {"script_name": script}),
                          step("submit what the starter produced", "Final Answer",
                               {"final_answer": "The demo model ran the starter script unchanged."})))


def demo_helper_reply(purpose: str, prompt: str) -> str:
    """A deterministic stand-in for helper-model calls made during a demonstration."""
    if purpose.startswith("edit"):
        return "```python\n# (demo model) no edit is made in a demonstration\n```"
    excerpt = prompt[-400:].strip().replace("\n", " ")
    return f"(demo model: no real model was called) The last part of the request read: {excerpt}"


class OfflineModels:
    """The offline models of one run, each made on first use, with how far each has played."""

    def __init__(self, demo: Demonstration | list[str] | None = None, starter_script: str = "train.py",
                 reply_format: Reply | None = None, tool_names: dict | None = None):
        if isinstance(demo, list):  # a version-1 demonstration: replies as written
            demo = Demonstration(replies=tuple(demo))
        self.demo = demo  # the task's demonstration; None: list files, run the starter, submit
        self.starter_script = starter_script
        self.reply_format = reply_format  # the running agent's (the Agent view's reply); None: the research agent's
        self.tool_names = tool_names  # action name -> tool name, for a tool agent
        self._models: dict[str, OfflineModel] = {}

    def model(self, model: str) -> OfflineModel:
        """The offline model for `mlab/...` (a RepliesExhausted error if it cannot play)."""
        name = model[len("mlab/"):] if model.startswith("mlab/") else model
        model = f"mlab/{name}"
        if name not in self._models:
            kind, _, argument = name.partition(":")
            if kind == "scripted" and argument:
                self._models[name] = Scripted(model, argument)
            elif kind == "replay" and argument:
                self._models[name] = Replay(model, argument)
            elif kind == "human":
                self._models[name] = Human(model)
            elif kind == "demo":
                self._models[name] = Demo(model, self.demo, self.starter_script, self.reply_format,
                                           self.tool_names)
            else:
                raise RepliesExhausted(f"unknown offline model {model!r}: use mlab/scripted:PATH, "
                                       "mlab/replay:RUN_DIR, mlab/human or mlab/demo")
        return self._models[name]

    def respond(self, model: str, tier: str, purpose: str, messages: list[dict],
                tools: list[dict] | None) -> "OfflineResponse":
        """The reply of offline `model` to one call: its text for a call without tools, else its
        assistant message with its tool calls (RepliesExhausted when it cannot reply)."""
        player = self.model(model)
        messages = [_as_sent(message) for message in messages]
        if not tools:
            text = player.reply(tier, purpose, last_text(messages))
            return OfflineResponse({"role": "assistant", "content": text}, "stop")
        entry = player.reply_message(tier, purpose, messages, tools)
        calls = _tool_calls(entry, messages)
        message = {"role": "assistant", "content": entry.get("content")}
        if calls:
            message["tool_calls"] = calls
        return OfflineResponse(message, "tool_calls" if calls else "stop")

    def set_position(self, model: str, tier: str, used: int) -> None:
        """Resume: the first `used` replies of this tier were consumed by the earlier part of the run."""
        state = self.model(model)
        key = "all" if isinstance(state, Scripted) else tier
        state.position[key] = state.position.get(key, 0) + used if key == "all" else used


class OfflineResponse:
    """An offline reply in the shape of a provider's chat response, as mlab.models.response reads
    it: one choice, with the assistant message (OpenAI form) and why it ended."""

    def __init__(self, message: dict, finish_reason: str):
        self.choices = [SimpleNamespace(message=message, finish_reason=finish_reason)]


def _as_sent(message: dict) -> dict:
    """A message as offline models have always been shown it: without its fields set to None, and
    with the role "assistant" where it has none (what litellm handed its custom providers, which
    the made-up tool-call ids of `_tool_calls` are computed from)."""
    message = {key: value for key, value in message.items() if value is not None}
    if not message.get("role"):
        message["role"] = "assistant"
    return message


def _tool_calls(entry: dict, messages: list[dict]) -> list[dict]:
    """An offline entry's tool calls in OpenAI form, the arguments as JSON text. A call without an
    id gets one made up from the conversation, so that it is the same when a run is replayed and
    differs from every earlier call's; an explicit "id": null stays missing."""
    turn = hashlib.sha256(json.dumps(messages, sort_keys=True, default=str).encode("utf-8", "surrogatepass"))
    calls = []
    for index, call in enumerate(entry.get("tool_calls") or []):
        arguments = call.get("arguments", {})
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        calls.append({"id": call.get("id", f"call_{turn.hexdigest()[:12]}_{index + 1}"), "type": "function",
                      "function": {"name": call.get("name") or "", "arguments": arguments}})
    return calls
