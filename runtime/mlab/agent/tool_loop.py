"""The steps of a tool agent (`respond tools`): the prompt is a conversation, the action a tool call.

Each step sends the system message (the `prompt` template, the same at every step), the
problem (`problem`), the history window as the assistant messages that were answered, each
followed by one `tool` message per tool call, and the `turn` message; the tools go with it.
A reply that makes no usable call is answered with the format-error text (as the result of
each bad call, or as a user message when no call can be answered) and asked again, up to the
agent's retries. Parallel calls are declared: `off` runs the first call and answers the others
with a result saying one action per step; `ordered` runs every call in order, one trace record
each (a run stopped between them continues with the next call, without asking the model).

When the user asks for it (`mlab run --no-tools`) or the server refuses tools, the agent runs
its declared fallback format instead: a conversation of the system message, the problem and
the history as text, whose reply is parsed as a text agent's is.
"""
from __future__ import annotations

import difflib
import json
from dataclasses import dataclass

from mlab.actions.table import ActionRejected
from mlab.agent import context as C
from mlab.agent.outcome import LoopOutcome, model_outcome
from mlab.agent.replies import ReplyError, parse_json_lenient, parse_reply, parse_text_sections
from mlab.failure import FailureMode
from mlab.models.errors import ModelError
from mlab.models.response import ECHOED_FIELDS
from mlab.models.decode import MAX_ARGUMENT_CHARS, object_arguments, refusal
from mlab.models.errors import ToolsRefused
from mlab.models.offline import tool_definition
from mlab.text import bound_text
from mlab.trace import PREVIEW_CHARS

ONE_PER_STEP = ("Not run: this agent takes one action per step, and only the first tool call of the reply "
                "was run. Call the next tool in your next reply.")
NOT_RUN = "Not run: another tool call of this reply could not be used; send the calls again, corrected."
NO_TOOLS_REASON = "asked for with --no-tools"


@dataclass(frozen=True)
class PlannedCall:
    """A tool call of a reply that can be run: its id, tool and action, and the checked inputs."""

    id: str
    name: str
    action: str
    arguments: str
    inputs: dict
    index: int

    def to_json(self) -> dict:
        return {"id": self.id, "name": self.name, "arguments": self.arguments, "index": self.index}


class ToolReplyError(Exception):
    """A reply that cannot be run: the error, and what to send back (a result per bad call, or a
    user message when no call can be answered)."""

    def __init__(self, error: str, per_call: dict[str, str] | None = None):
        super().__init__(error)
        self.per_call = per_call  # tool_call_id -> error; None: answer with a user message


def echoed(message: dict, inputs: dict | None = None) -> dict:
    """An assistant message as it is sent back in later requests: its text, its tool calls and
    the provider fields to echo. Arguments that are not a JSON object (a hostile reply, or a
    long text the trace keeps a preview of) are replaced by an object holding their text, since
    some providers decode them."""
    out = {"role": "assistant", "content": message.get("content")}
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str) or object_arguments(arguments) is None:
            arguments = json.dumps((inputs or {}).get(call.get("id")) or {"unparsed_arguments": str(arguments)[:2000]},
                                   ensure_ascii=False)
        calls.append({"id": call.get("id"), "type": "function",
                      "function": {"name": function.get("name") or "", "arguments": arguments}})
    if calls:
        out["tool_calls"] = calls
        # a message of calls alone is echoed with empty text, not null: llama.cpp's server (and
        # other OpenAI-compatible ones) refuse a null content, and litellm drops the empty text
        # for providers that refuse empty text blocks (Anthropic)
        out["content"] = out["content"] or ""
    elif not out["content"]:
        out["content"] = "(no text)"
    for name in ECHOED_FIELDS:
        if message.get(name) is not None:
            out[name] = message[name]
    return out


def conversation_text(messages: list[dict]) -> str:
    """A conversation as readable text (the record's prompt)."""
    parts = []
    for message in messages:
        head = message["role"] + (f" ({message['tool_call_id']})" if message.get("tool_call_id") else "")
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        lines = [content] if content else []
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            lines.append(f"-> {function.get('name')} {function.get('arguments')} [{call.get('id')}]")
        parts.append(f"[{head}]\n" + "\n".join(lines))
    return "\n\n".join(parts) + "\n"


def message_groups(records: list[dict]) -> list[list[dict]]:
    """The records grouped by the assistant message they ran (a record without a tool call alone)."""
    groups: list[list[dict]] = []
    for record in records:
        model = record.get("model") or {}
        call = model.get("tool_call")
        if call and not model.get("message") and groups:
            first = groups[-1][0].get("model") or {}
            ids = [c.get("id") for c in (first.get("message") or {}).get("tool_calls") or []]
            if call.get("id") in ids:
                groups[-1].append(record)
                continue
        groups.append([record])
    return groups


class ToolSteps:
    """Runs the steps of a tool agent for an AgentLoop (which owns the run, the client, the
    templates, the summaries and the hooks)."""

    def __init__(self, loop, no_tools: bool = False):
        self.loop = loop
        run = loop.run
        reply = loop.reply_format
        self.sections = [s for s in reply.sections if s.kind == "text"]
        self.required = reply.sections_required
        self.tool_choice = reply.tool_choice or "required"
        self.parallel = reply.parallel or "off"
        self.fallback = reply.fallback
        shown = [a for a in run.agent.actions.actions if a.shown]
        self.shown = shown
        self.tools = [tool_definition(a) for a in shown]
        self.offered = [t["function"]["name"] for t in self.tools]
        # a hidden action is not offered but can be called, as a text agent can name it
        self.by_tool = {tool_definition(a)["function"]["name"]: a.name for a in run.agent.actions.actions}
        self.templates = loop.templates
        self.mode, self.reason = "tools", None
        for record in reversed(run.records):  # a run that fell back continues in its fallback
            model = record.get("model") or {}
            if model.get("format") and model["format"] != "tools":
                self.mode = model["format"]
                self.reason = next((((r.get("model") or {}).get("fallback_reason")) for r in run.records
                                    if (r.get("model") or {}).get("fallback_reason")), None)
                break
            if model.get("format") == "tools":
                break
        self._reason_recorded = self.mode != "tools"
        if self.mode == "tools" and no_tools:
            self._fall_back(NO_TOOLS_REASON)
        self._render_fixed()

    # -- the fixed parts of the conversation ---------------------------------------------
    def _fall_back(self, reason: str) -> None:
        self.mode, self.reason, self._reason_recorded = self.fallback.format, reason, False

    def _render_fixed(self) -> None:
        loop, run = self.loop, self.loop.run
        mode = self.mode
        tools_text = self.templates.render("tools", **C.tools_tools_context(actions=self.shown, mode=mode)) \
            if self.templates.has("tools") else ""
        if mode == "tools":
            shown_tools = tools_text if loop.reply_format.list_tools else ""
            names = list(self.offered)
            format_text = self.templates.render("reply_format", **C.reply_format_context(
                format="tools", sections=self.sections)) if self.templates.has("reply_format") else ""
        else:
            shown_tools, names = tools_text, [a.name for a in self.shown]
            template = "fallback_reply_format" if self.templates.has("fallback_reply_format") else "reply_format"
            format_text = self.templates.render(template, **C.fallback_reply_format_context(
                format=self.fallback.format, sections=self.fallback.sections))
        self.tool_names, self.format_text = names, format_text
        self.system = self.templates.render("prompt", **C.tools_prompt_context(
            task=run.task, tools=shown_tools, tool_names=names, reply_format=format_text,
            max_steps=run.limits.steps or 0))
        self.problem = self.templates.render("problem", **C.problem_context(task=run.task)) \
            if self.templates.has("problem") else run.task.view.problem

    def _turn(self, retrieved: str) -> str:
        run = self.loop.run
        step, most = run.steps_taken + 1, run.limits.steps or 0
        if self.templates.has("turn"):
            return self.templates.render("turn", **C.turn_context(
                step=step, max_steps=most, retrieved=retrieved, research_log=run.research_log.text(), task=run.task))
        text = f"This is step {step} of at most {most}." if most else f"This is step {step}."
        return text + (f"\n\nFrom your research log:\n{retrieved}" if retrieved else "")

    def _format_error(self, error: str) -> str:
        return self.templates.render("format_error", **C.format_error_context(
            error=error, reply_format=self.format_text, tool_names=self.tool_names))

    # -- the history window --------------------------------------------------------------
    def window(self) -> list[list[dict]]:
        """The message groups of the last history_steps records, whole: a tool call and its result
        enter and leave the window together."""
        steps = self.loop.view.history_steps
        chosen: list[list[dict]] = []
        count = 0
        for group in reversed(message_groups(self.loop.run.records) if steps else []):
            if count + len(group) > steps and chosen:
                break
            chosen.insert(0, group)
            count += len(group)
            if count >= steps:
                break
        return chosen

    def history_messages(self, calls: list[dict]) -> list[dict]:
        messages: list[dict] = []
        for group in self.window():
            first = group[0].get("model") or {}
            message = first.get("message")
            if first.get("tool_call") and isinstance(message, dict):
                ran = {(r.get("model") or {}).get("tool_call", {}).get("id"): r for r in group}
                inputs = {i: r.get("action_input") for i, r in ran.items() if isinstance(r.get("action_input"), dict)}
                others = {o["tool_call_id"]: o["content"] for o in first.get("other_results") or []}
                messages.append(echoed(message, inputs))
                for call in message.get("tool_calls") or []:
                    record = ran.get(call.get("id"))
                    content = self.loop.observation_for_history(record, calls) if record is not None \
                        else others.get(call.get("id"), "Not run.")
                    messages.append({"role": "tool", "tool_call_id": call.get("id"), "content": content})
            else:  # a step without a tool call (a fallback step, a driven one): as text
                record = group[0]
                said = (record.get("model") or {}).get("response") or \
                    f"Action: {C.prompt_text(record.get('action'))}\nAction Input: {C.prompt_text(record.get('action_input'))}"
                messages.append({"role": "assistant", "content": said or "(no text)"})
                messages.append({"role": "user", "content": "Observation: " +
                                 self.loop.observation_for_history(record, calls)})
        return messages

    def conversation(self, calls: list[dict], retrieved: str) -> list[dict]:
        """The messages of the next step: system, problem, the history window, the turn. In the
        fallback format the history is the history template's text, before the turn."""
        head = [{"role": "system", "content": self.system}, {"role": "user", "content": self.problem}]
        turn = self._turn(retrieved)
        history = self.loop.history_text(calls) if self.templates.has("history") else ""
        self.loop.run.services.history_text = history  # what the Reflection action shows its model
        if self.mode == "tools":
            return head + self.history_messages(calls) + [{"role": "user", "content": turn}]
        return head + [{"role": "user", "content": f"{history.rstrip()}\n\n{turn}" if history.strip() else turn}]

    # -- reading a reply -----------------------------------------------------------------
    def read(self, message: dict) -> tuple[dict, list[PlannedCall], list[dict]]:
        """The text sections, the calls to run, and the results of calls not run (parallel off);
        or ToolReplyError saying what is wrong."""
        content = message.get("content") or ""
        try:
            sections = parse_text_sections(content, self.sections, self.required)
            section_error = None
        except ReplyError as problem:
            sections, section_error = {}, str(problem)
        calls = message.get("tool_calls") or []
        if not calls:
            raise ToolReplyError("the reply makes no tool call; every reply must call one of the tools "
                                 f"({', '.join(self.offered)})")
        ids = [call.get("id") for call in calls]
        if not all(isinstance(i, str) and i for i in ids):
            raise ToolReplyError("a tool call of the reply has no id; call the tool again")
        if len(set(ids)) != len(ids):
            raise ToolReplyError("two tool calls of the reply have the same id; call the tools again")
        if section_error:
            raise ToolReplyError(section_error, {i: section_error for i in ids})
        considered = calls if self.parallel == "ordered" else calls[:1]
        problems: dict[str, str] = {}
        planned = []
        for index, call in enumerate(considered):
            try:
                planned.append(self._plan(call, index))
            except ReplyError as problem:
                problems[call["id"]] = str(problem)
        if problems:
            raise ToolReplyError("; ".join(problems.values()), problems)
        others = [{"tool_call_id": call["id"], "content": ONE_PER_STEP, "is_error": True}
                  for call in calls[len(considered):]]
        return sections, planned, others

    def _plan(self, call: dict, index: int) -> PlannedCall:
        function = call.get("function") or {}
        name = function.get("name")
        action = self.by_tool.get(name) if isinstance(name, str) else None
        if action is None:
            guess = difflib.get_close_matches(str(name), self.offered, n=1, cutoff=0.5)
            hint = f" Did you mean {guess[0]!r}?" if guess else ""
            raise ReplyError(f"{name!r} is not a tool you can use.{hint} Tools: {', '.join(self.offered)}.")
        arguments = function.get("arguments")
        text = arguments if isinstance(arguments, str) else ""
        refused = refusal(text)
        if refused:
            raise ReplyError(f"the arguments of {name} were not read: {refused}")
        if len(text) > MAX_ARGUMENT_CHARS:
            raise ReplyError(f"the arguments of {name} are {len(text):,} characters long, more than the "
                             f"{MAX_ARGUMENT_CHARS:,} a tool call may hold; write large files in parts (Append File)")
        inputs = parse_json_lenient(text) if text.strip() else {}
        if not isinstance(inputs, dict):
            raise ReplyError(f"the arguments of {name} must be a JSON object such as {{\"name\": \"value\"}}")
        try:
            self.loop.run.table.prepare(action, inputs)
        except ActionRejected as problem:
            raise ReplyError(f"the arguments of {name} do not fit its parameters: {problem}") from None
        return PlannedCall(call["id"], name, action, text, inputs, index)

    def feedback(self, message: dict, problem: ToolReplyError) -> list[dict]:
        """What is sent back after a reply that cannot be run."""
        if problem.per_call is None:
            return [{"role": "assistant", "content": bound_text(message.get("content") or "", PREVIEW_CHARS)
                     or "(no text)"}, {"role": "user", "content": self._format_error(str(problem))}]
        back = [echoed(message)]
        for call in message.get("tool_calls") or []:
            error = problem.per_call.get(call.get("id"))
            back.append({"role": "tool", "tool_call_id": call.get("id"),
                         "content": self._format_error(error) if error else NOT_RUN})
        return back

    # -- one step ------------------------------------------------------------------------
    def step(self):
        loop, run = self.loop, self.loop.run
        try:
            pending = self.pending()
        except ModelError as problem:  # the research-log entry of the record before failed
            return self._model_failed(problem, [], None)
        if pending:
            return self._run_calls(*pending)
        calls: list[dict] = []
        run.services.calls = calls
        known = set(loop.summaries)
        prompt = None
        try:
            retrieved = loop.hooks_before(calls)
            while True:
                messages = self.conversation(calls, retrieved)
                prompt = conversation_text(messages)
                try:
                    asked = self.ask(messages, calls) if self.mode == "tools" else self.ask_text(messages, calls)
                    break
                except ToolsRefused as refused:
                    if not self.fallback:
                        raise ModelError(f"{refused}; agent {run.agent.name} declares no fallback format to "
                                         "run without tools") from None
                    self._fall_back(f"the server refused tools: {refused}")
                    self._render_fixed()
        except ModelError as problem:
            return self._model_failed(problem, calls, prompt)
        summaries = {str(k): v for k, v in loop.summaries.items() if k not in known}
        message, sections, planned, others, errors = asked
        response = (message or {}).get("content") or ""
        exchange = self._exchange(sections, response, calls, errors, prompt, summaries)
        if planned is None:
            loop.account(calls)
            detail = f"no usable reply after {len(errors)} attempt(s); last problem: {errors[-1]}"
            run.finish(FailureMode.RESPONSE_FORMAT_ERROR, detail=detail, model=exchange)
            return LoopOutcome("failed", FailureMode.RESPONSE_FORMAT_ERROR, detail)
        if self.mode != "tools":
            action, action_input = planned
            return self.loop.after_step(run.step(action, action_input, model=exchange,
                                              hooks={"retrieved": retrieved} if retrieved else None), calls)
        exchange["message"] = message
        if others:
            exchange["other_results"] = others
        return self._run_calls(planned, exchange, calls, retrieved)

    def _model_failed(self, problem: ModelError, calls: list[dict], prompt: str | None) -> LoopOutcome:
        """End the run after a model call that failed for good or was not made (a spent budget)."""
        self.loop.account(calls)
        reason, outcome = model_outcome(problem)
        self.loop.run.finish(reason, detail=str(problem), model=self._exchange({}, "", calls, [], prompt, None))
        return outcome

    def _run_calls(self, planned: list[PlannedCall], exchange: dict, calls: list[dict], retrieved: str = ""):
        """Run the calls of one message in order, one record each, until the run ends."""
        run = self.loop.run
        for position, call in enumerate(planned):
            if run.ended:
                break
            if position:  # the next record of the same message: the hooks' calls of this record only
                try:
                    exchange, calls = self._continuation()
                except ModelError as problem:
                    return self._model_failed(problem, [], None)
            exchange["tool_call"] = call.to_json()
            hooks = {"retrieved": retrieved} if retrieved and not position else None
            outcome = self.loop.after_step(run.step(call.action, call.inputs, model=exchange, hooks=hooks), calls)
            if outcome is not None:
                return outcome
        return None

    def pending(self):
        """The calls of the last message not run yet (a run of ordered calls stopped between two):
        (calls, exchange, calls list) to run them, or None."""
        run = self.loop.run
        if self.mode != "tools" or self.parallel != "ordered" or not run.records or run.ended:
            return None
        group = message_groups(run.records)[-1]
        first = group[0].get("model") or {}
        if not first.get("tool_call") or not isinstance(first.get("message"), dict):
            return None
        try:
            _, planned, _ = self.read(first["message"])
        except (ToolReplyError, ReplyError):
            return None
        done = {(r.get("model") or {}).get("tool_call", {}).get("id") for r in group}
        left = [call for call in planned if call.id not in done]
        if not left:
            return None
        exchange, calls = self._continuation()
        return left, exchange, calls

    def _continuation(self) -> tuple[dict, list[dict]]:
        """The exchange of a further record of a message already answered: no model call of its own,
        only the research-log entry of the record before it (the after-step hook)."""
        loop = self.loop
        calls: list[dict] = []
        loop.run.services.calls = calls
        if "append_summary" in loop.view.hooks.after_step and loop.run.records:
            loop.append_summary_of(loop.run.records[-1], calls)
        exchange = {"format": "tools", "response": "", "reply": {}, "calls": calls, "format_errors": [],
                    "summaries": {}, "stable_prefix_chars": 0}
        return exchange, calls

    def _exchange(self, sections, response, calls, errors, prompt, summaries) -> dict:
        exchange = {"format": self.mode, "response": response, "reply": dict(sections or {}), "calls": calls,
                    "format_errors": errors, "summaries": summaries or {},
                    "stable_prefix_chars": len(self.system)}
        if prompt is not None:
            exchange["prompt"] = prompt
        if self.reason and not self._reason_recorded:
            exchange["fallback_reason"] = self.reason
            self._reason_recorded = True
        return exchange

    def ask(self, messages: list[dict], calls: list[dict]):
        """Ask for a tool call, retrying with the format-error text while the reply cannot be run."""
        errors: list[str] = []
        sent = list(messages)
        message = None
        for attempt in range(self.loop.view.format_retries + 1):
            call = self.loop.client.chat("main", sent, tools=self.tools, tool_choice=self.tool_choice,
                                         parallel_tool_calls=False if self.parallel == "off" else None)
            calls.append(dict(call.to_json(), prompt=conversation_text(sent[len(messages) - 1:]) if attempt else None))
            message = call.message or {"role": "assistant", "content": call.response}
            try:
                sections, planned, others = self.read(message)
                return message, sections, planned, others, errors
            except ToolReplyError as problem:
                errors.append(str(problem))
                sent = sent + self.feedback(message, problem)
        return message, {}, None, [], errors

    def ask_text(self, messages: list[dict], calls: list[dict]):
        """The fallback format: the history as text in the last user message, the reply parsed as a
        text agent's."""
        sent = list(messages)
        errors: list[str] = []
        response = ""
        names = [a.name for a in self.loop.run.agent.actions.actions]
        for attempt in range(self.loop.view.format_retries + 1):
            call = self.loop.client.chat("main", sent)
            calls.append(dict(call.to_json(), prompt=conversation_text(sent[len(messages) - 1:]) if attempt else None))
            response = call.response
            try:
                parsed = parse_reply(response, self.fallback, names)
                return {"content": response}, parsed.sections, (parsed.action, parsed.action_input), [], errors
            except ReplyError as problem:
                errors.append(str(problem))
                sent = sent + [{"role": "assistant", "content": bound_text(response, PREVIEW_CHARS) or "(no text)"},
                               {"role": "user", "content": self._format_error(str(problem))}]
        return {"content": response}, {}, None, [], errors
