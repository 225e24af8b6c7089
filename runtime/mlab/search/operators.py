"""The operators of a search agent: render the draft, improve, debug or crossover prompt, call the
main model, and parse its reply into a plan and exactly one Python code block; the review: the
fast model reads a node's output and says whether it is buggy, its validation score and a summary.

A reply that does not parse is answered with the agent's format_error template and asked again,
up to the agent's format retries; what the model said each time goes into the node's record.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from mlab.agent.replies import MAX_REPLY_CHARS, ReplyError, parse_json_lenient
from mlab.models.client import ModelClient
from mlab.models.decode import refusal
from mlab.models.errors import BudgetSpent
from mlab.text import bound_text
from mlab.trace import PREVIEW_CHARS

# What an operator's reply must look like: the text the format_error template gets as `reply_format`.
OPERATOR_FORMAT = ("Reply with a plan in prose (a few sentences), then exactly one ```python code block "
                   "holding the whole script.")
REVIEW_FORMAT = ('Reply with one JSON object: {"is_bug": true or false, "metric": the validation score as a '
                 'number or null, "summary": "a few sentences on what the output shows"}.')
_OPENING = re.compile(r"[ \t]*```[ \t]*([A-Za-z0-9_+-]*)[^`\n]*$")
PYTHON_LABELS = ("python", "py", "python3")


@dataclass
class Exchange:
    """The model exchange that made (or reviewed) a node: prompt, replies, calls, format errors."""
    prompt: str = ""
    response: str = ""
    reply: dict = field(default_factory=dict)
    calls: list[dict] = field(default_factory=list)
    format_errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"prompt": self.prompt, "response": self.response, "reply": dict(self.reply),
                "calls": self.calls, "format_errors": self.format_errors}


def fenced_blocks(text: str) -> list[tuple[str, str, int]]:
    """(label, body, offset of the opening fence) of every closed ``` block, in one pass over the lines
    (so a reply full of unclosed fences costs no more than its length)."""
    blocks, offset, opened = [], 0, None
    for line in text.splitlines(keepends=True):
        bare = line.strip()
        if opened is None:
            match = _OPENING.match(line)
            if match:
                opened = (match.group(1), offset + len(line), offset)
        elif bare == "```":
            label, start, fence = opened
            blocks.append((label, text[start:offset], fence))
            opened = None
        offset += len(line)
    return blocks


def parse_operator_reply(text: str) -> tuple[str, str]:
    """(plan, code) of a reply: the prose before the code block, and the one Python block."""
    if len(text) > MAX_REPLY_CHARS:
        raise ReplyError(f"the reply is {len(text):,} characters long, more than the {MAX_REPLY_CHARS:,} "
                         "a reply may hold")
    blocks = fenced_blocks(text)
    python = [block for block in blocks if block[0].lower() in PYTHON_LABELS]
    if not python and len(blocks) == 1 and not blocks[0][0]:
        python = blocks  # one unlabelled block: taken as the script
    if not python:
        raise ReplyError("the reply has no ```python code block; give the whole script in one")
    if len(python) > 1:
        raise ReplyError(f"the reply has {len(python)} ```python code blocks; give exactly one, "
                         "holding the whole script")
    _, code, fence = python[0]
    if not code.strip():
        raise ReplyError("the reply's ```python code block is empty")
    return text[:fence].strip(), code if code.endswith("\n") else code + "\n"


def parse_review(text: str) -> dict:
    """{"is_bug": bool, "metric": float | None, "summary": str} from the fast model's reply."""
    try:
        value = parse_json_lenient(text)
    except ReplyError as problem:
        raise ReplyError(f"the review is not a JSON object ({problem})") from None
    return review_fields(value)


def review_fields(value) -> dict:
    """The checked fields of a review given as an object (a JSON reply or a tool call's arguments)."""
    if not isinstance(value, dict):
        raise ReplyError("the review must be one JSON object with is_bug, metric and summary")
    is_bug = value.get("is_bug")
    if isinstance(is_bug, str) and is_bug.strip().lower() in ("true", "false"):
        is_bug = is_bug.strip().lower() == "true"
    if not isinstance(is_bug, bool):
        raise ReplyError("the review's is_bug must be true or false")
    metric = value.get("metric")
    if isinstance(metric, str):
        try:
            metric = float(metric.strip())
        except ValueError:
            raise ReplyError(f"the review's metric must be a number or null, not {metric[:40]!r}") from None
    if metric is not None and (isinstance(metric, bool) or not isinstance(metric, (int, float))
                               or not math.isfinite(metric)):
        raise ReplyError("the review's metric must be a finite number or null")
    summary = value.get("summary")
    summary = "" if summary is None else str(summary)
    return {"is_bug": is_bug, "metric": None if metric is None else float(metric), "summary": summary}


class Asker:
    """Asks a tier's model with one template's prompt, retrying with format_error while the reply
    does not parse. Raises ModelError from the client; returns (parsed or None, Exchange)."""

    def __init__(self, client: ModelClient, templates, names, retries: int, code_file: str):
        self.client = client
        self.code_file = code_file
        self.use_tools = True  # the review asks for a tool call until a server refuses tools
        self.templates = templates  # mlab.agent.prompting.Templates of the agent
        self.names = set(names)  # the template names the agent has
        self.retries = max(int(retries), 0)

    def ask(self, tier: str, purpose: str, prompt: str, parse, expected: str):
        exchange = Exchange(prompt=prompt)
        text = prompt
        for _ in range(self.retries + 1):
            try:
                call = self.client.complete(tier, text, purpose=purpose)
            except BudgetSpent as spent:  # spent by this exchange's own calls: the node is recorded with them
                if not exchange.calls:
                    raise
                exchange.format_errors.append(f"not asked again: {spent}")
                return None, exchange
            exchange.calls.append(dict(call.to_json(), prompt=text if text is not prompt else None))
            exchange.response = call.response
            try:
                return parse(call.response), exchange
            except ReplyError as problem:
                exchange.format_errors.append(str(problem))
                text = f"{prompt}\n\nYour previous reply was:\n{bound_text(call.response, PREVIEW_CHARS)}\n\n" \
                       f"{self.feedback(str(problem), expected)}"
        return None, exchange

    def feedback(self, error: str, expected: str) -> str:
        if "format_error" in self.names:
            # a search agent's format_error takes error and code_file; reply_format and tool_names
            # are there too, for a format_error written for the linear loop
            return self.templates.render("format_error", error=error, code_file=self.code_file,
                                         reply_format=expected, tool_names=[])
        return f"That reply could not be used: {error}. {expected}"


REVIEW_TOOL = {"type": "function", "function": {
    "name": "submit_review",
    "description": "Submit your review of the script's output: whether the run failed or is buggy, the "
                   "validation score it reports, and a short summary.",
    "parameters": {"type": "object", "required": ["is_bug", "metric", "summary"], "properties": {
        "is_bug": {"type": "boolean", "description": "true when the script failed, crashed, or its "
                                                     "result cannot be trusted"},
        "metric": {"type": ["number", "null"], "description": "the validation score the output reports; "
                                                              "null when it reports none"},
        "summary": {"type": "string", "description": "a few sentences on what the output shows"}}}}}


def ask_review(asker: Asker, prompt: str):
    """The review of a node: first as a call of the submit_review tool (a model that answers in text,
    or a server that refuses tools, is read from its text), then by the text retries of `asker`."""
    from mlab.models.errors import ToolsRefused

    chat = getattr(asker.client, "chat", None)
    if chat is None or not asker.use_tools:
        return asker.ask("fast", "review", prompt, parse_review, REVIEW_FORMAT)
    try:
        call = chat("fast", [{"role": "user", "content": prompt}], tools=[REVIEW_TOOL],
                    tool_choice="required", parallel_tool_calls=False, purpose="review")
    except BudgetSpent as spent:  # the node is recorded unreviewed; the search ends at the limit
        return None, Exchange(prompt=prompt, format_errors=[f"not asked: {spent}"])
    except ToolsRefused:
        asker.use_tools = False
        return asker.ask("fast", "review", prompt, parse_review, REVIEW_FORMAT)
    exchange = Exchange(prompt=prompt, response=call.response, calls=[dict(call.to_json(), prompt=None)])
    try:
        calls = (call.message or {}).get("tool_calls") or []
        if calls:
            arguments = (calls[0].get("function") or {}).get("arguments") or "{}"
            refused = refusal(arguments)
            if refused:
                raise ReplyError(f"the arguments of submit_review were not read: {refused}")
            return review_fields(parse_json_lenient(arguments) if isinstance(arguments, str) else arguments), exchange
        return parse_review(call.response), exchange
    except ReplyError as problem:
        exchange.format_errors.append(str(problem))
    if asker.retries == 0:
        return None, exchange
    retried = Asker(asker.client, asker.templates, asker.names, asker.retries - 1, asker.code_file)
    try:
        parsed, more = retried.ask("fast", "review", prompt, parse_review, REVIEW_FORMAT)
    except BudgetSpent as spent:
        exchange.format_errors.append(f"not asked again: {spent}")
        return None, exchange
    more.calls = exchange.calls + more.calls
    more.format_errors = exchange.format_errors + more.format_errors
    return parsed, more
