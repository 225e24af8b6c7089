"""The agent loop: render the compiled prompt, call the main model, parse the reply
by the declared format, act through the run, and repeat until the run ends.

Everything agent-specific comes from the compiled agent (templates, reply format,
history window, summary threshold, retries, hooks); this module has no
knowledge of any particular agent.
"""
from __future__ import annotations

from typing import Callable

from mlab.agent import context as C
from mlab.failure import FailureMode
from mlab.agent.model_actions import install as install_model_actions
from mlab.scoring.validation import install as install_validation
from mlab.models.client import ModelCall, ModelClient
from mlab.models.errors import ModelError
from mlab.models.usage import Usage
from mlab.models.usage import Budget, limit_spent
from mlab.text import bound_text
from mlab.agent.prompting import Templates, stable_prefix
from mlab.agent.replies import ParsedReply, ReplyError, parse_reply
from mlab.agent.outcome import LoopOutcome, model_outcome
from mlab.agent.tool_loop import ToolSteps
from mlab.trace import PREVIEW_CHARS

SUMMARY_CHUNK_CHARS = 10000


class AgentLoop:
    """Drives one Run with one ModelClient until the run ends."""

    def __init__(self, run, client: ModelClient, *, on_step: Callable | None = None,
                 should_stop: Callable[[], bool] | None = None, no_tools: bool = False):
        install_model_actions(run.table.primitives)
        install_validation(run)
        self.run = run
        self.client = client
        self.on_step = on_step
        self.should_stop = should_stop or (lambda: False)
        self.view = run.agent.view
        self.templates = Templates(run.agent.templates)
        actions = run.agent.actions.actions
        self.action_names = [a.name for a in actions]
        shown = [a for a in actions if a.shown]
        self.tool_names = [a.name for a in shown]
        self.reply_format = self.view.reply
        self.tool_steps = None
        if self.reply_format.format == "tools":  # a tool agent: its steps are ToolSteps'
            self.tools_text = self.reply_format_text = ""
        else:
            self.tools_text = self.templates.render("tools", **C.tools_context(actions=shown))
            self.reply_format_text = self.templates.render("reply_format", **C.reply_format_context(
                format=self.reply_format.format, sections=self.reply_format.sections))
        self.usage = Usage.from_records(run.records)
        # every model call of the run (helper actions, summaries and hooks too) is checked against the
        # run's token and cost limits before it is made, and charged as it is made
        client.budget = Budget(run.limits.tokens, run.limits.cost, Usage.from_records(run.records), run.limits.calls)
        self._prefix: str | None = None
        self.summaries: dict[int, str] = {}
        for record in run.records:
            for number, text in ((record.get("model") or {}).get("summaries") or {}).items():
                self.summaries[int(number)] = text
        run.services.models, run.services.templates, run.services.task = client, self.templates, run.task
        if self.reply_format.format == "tools":
            self.tool_steps = ToolSteps(self, no_tools=no_tools)

    # -- the prompt ----------------------------------------------------------------------
    def history_text(self, pending_calls: list[dict]) -> str:
        window = self.view.history_steps
        records = self.run.records[-window:] if window else []
        views = []
        # a tool call's step in text: its action and input under the fallback's section names
        fallback = self.reply_format.fallback
        named = [(s.name, s.kind) for s in (fallback.sections if fallback else ()) if s.kind in ("action", "json")]
        for record in records:
            view = C.history_step_view(record)
            view["observation"] = self.observation_for_history(record, pending_calls)
            if (record.get("model") or {}).get("tool_call"):
                for name, kind in named:
                    view["reply"].setdefault(name, view["action"] if kind == "action" else view["action_input"])
            views.append(view)
        return self.templates.render("history", **C.history_context(steps=views))

    def observation_for_history(self, record: dict, pending_calls: list[dict]) -> str:
        text = record["observation"]
        if len(text) <= self.view.summarize_over_chars:
            return text
        number = record["step"]
        if number not in self.summaries:
            self.summaries[number] = self._summarize(record, pending_calls)
        return self.summaries[number]

    def _summarize(self, record: dict, pending_calls: list[dict]) -> str:
        text = record["observation"]
        chunks = [text[i:i + SUMMARY_CHUNK_CHARS] for i in range(0, len(text), SUMMARY_CHUNK_CHARS)]
        parts = []
        for index, chunk in enumerate(chunks, 1):
            prompt = self.templates.render("summarize_observation", **C.summarize_observation_context(
                action=C.prompt_text(record.get("action")), action_input=record.get("action_input"),
                observation=chunk, chunk_index=index, chunk_count=len(chunks)))
            call = self.client.complete("fast", prompt, purpose="summarize_observation")
            pending_calls.append(dict(call.to_json(), prompt=prompt))
            parts.append(call.response.strip())
        return "\n".join(parts)

    def _plan_text(self) -> str:
        """The latest plan section (by role), for research-log retrieval."""
        fallback = self.reply_format.fallback
        sections = [*self.reply_format.sections, *(fallback.sections if fallback else ())]
        plan = [s.name for s in sections if s.role == "plan"]
        for record in reversed(self.run.records):
            reply = (record.get("model") or {}).get("reply") or {}
            for name in plan:
                if reply.get(name):
                    return reply[name]
        return self.run.task.view.problem

    def hooks_before(self, calls: list[dict]) -> str:
        """Run the declared per-step hooks before a prompt; returns what retrieval found.

        The after-step summary of the previous step runs here too, at the start of the next
        step, so that its model call is recorded in a trace record: a run stopped between two
        steps then loses nothing, and on resume the summary is made exactly once.
        """
        if "append_summary" in self.view.hooks.after_step and self.run.records:
            self.append_summary_of(self.run.records[-1], calls)
        retrieved = ""
        if "retrieve_log" in self.view.hooks.before_step and self.run.research_log.text().strip():
            prompt = self.templates.render("retrieve_log", **C.retrieve_log_context(
                current_plan=self._plan_text(), research_log=self.run.research_log.text(), task=self.run.task))
            call = self.client.complete("fast", prompt, purpose="retrieve_log")
            calls.append(dict(call.to_json(), prompt=prompt))
            retrieved = call.response.strip()
        return retrieved

    def append_summary_of(self, record: dict, calls: list[dict]) -> None:
        """The research-log entry of a finished step, written by the fast model."""
        if record.get("action") is None:
            return  # a record that ended the run has nothing to summarise
        prompt = self.templates.render("append_summary", **C.append_summary_context(
            step=record["step"], reply=(record.get("model") or {}).get("response") or "",
            action=C.prompt_text(record["action"]), action_input=record.get("action_input"),
            observation=record["observation"]))
        call = self.client.complete("fast", prompt, purpose="append_summary")
        calls.append(dict(call.to_json(), prompt=prompt))
        self.run.research_log.append(f"Step {record['step']}:\n{call.response.strip()}\n")

    def build_prompt(self, calls: list[dict]) -> tuple[str, str, str]:
        """The prompt of the next step, its stable prefix, and what the hooks retrieved."""
        retrieved = self.hooks_before(calls)
        history = self.history_text(calls)
        self.run.services.history_text = history  # what the Reflection action shows its model
        variables = C.prompt_context(
            task=self.run.task, tools=self.tools_text, tool_names=self.tool_names,
            reply_format=self.reply_format_text, history=history,
            research_log=self.run.research_log.text(), retrieved=retrieved, step=self.run.steps_taken + 1,
            max_steps=self.run.limits.steps or 0)
        prompt = self.templates.render("prompt", **variables)
        if self._prefix is None:  # depends only on what is fixed for the run
            self._prefix = stable_prefix(self.templates, variables)
        return prompt, self._prefix, retrieved

    # -- one step ------------------------------------------------------------------------
    def ask(self, prompt: str, prefix: str, calls: list[dict]) -> tuple[ParsedReply | None, str, list[str]]:
        """Call the main model, retrying with the format-error message while the reply does not parse."""
        errors: list[str] = []
        text = prompt
        response = ""
        for _ in range(self.view.format_retries + 1):
            call: ModelCall = self.client.complete("main", text, purpose="step", stable_prefix=prefix)
            calls.append(dict(call.to_json(), prompt=text if text is not prompt else None))
            response = call.response
            try:
                return parse_reply(response, self.reply_format, self.action_names), response, errors
            except ReplyError as problem:
                errors.append(str(problem))
                feedback = self.templates.render("format_error", **C.format_error_context(
                    error=str(problem), reply_format=self.reply_format_text, tool_names=self.tool_names))
                shown = bound_text(response, PREVIEW_CHARS)  # a 10 MB reply is not sent back in full
                text = f"{prompt}\n\nYour previous reply was:\n{shown}\n\n{feedback}"
        return None, response, errors

    def limit_reached(self) -> str | None:
        limits = self.run.limits
        return limit_spent(self.usage, limits.tokens, limits.cost, limits.calls)

    def step(self) -> LoopOutcome | None:
        if self.tool_steps is not None:
            return self.tool_steps.step()
        calls: list[dict] = []
        self.run.services.calls = calls  # model-backed actions add their calls to this step's record
        known = set(self.summaries)
        try:
            prompt, prefix, retrieved = self.build_prompt(calls)
            parsed, response, errors = self.ask(prompt, prefix, calls)
        except ModelError as problem:
            self.account(calls)
            reason, outcome = model_outcome(problem)
            self.run.finish(reason, detail=str(problem), model=self._exchange(None, "", calls, [], None, prefix=""))
            return outcome
        summaries = {str(k): v for k, v in self.summaries.items() if k not in known}
        if parsed is None:
            self.account(calls)
            detail = f"no usable reply after {len(errors)} attempt(s); last problem: {errors[-1]}"
            self.run.finish(FailureMode.RESPONSE_FORMAT_ERROR, detail=detail,
                            model=self._exchange(None, response, calls, errors, prompt, summaries, prefix))
            return LoopOutcome("failed", FailureMode.RESPONSE_FORMAT_ERROR, detail)
        exchange = self._exchange(parsed, response, calls, errors, prompt, summaries, prefix)
        observation = self.run.step(parsed.action, parsed.action_input, model=exchange,
                                     hooks={"retrieved": retrieved} if retrieved else None)
        return self.after_step(observation, calls)

    def after_step(self, observation, calls: list[dict]) -> LoopOutcome | None:
        """Count a recorded step's model calls, end the run if a model-backed action's model failed,
        and report the step; the outcome when the run ended."""
        self.account(calls)
        failure, self.run.services.model_failure = self.run.services.model_failure, None
        if failure is not None:
            reason, outcome = model_outcome(failure)
            self.run.finish(reason, detail=str(failure))
            return outcome
        if self.on_step:
            self.on_step(self.run.records[-1], observation, self.usage)
        return None

    def account(self, calls: list[dict]) -> None:
        for call in calls:
            self.usage.add(call)

    @staticmethod
    def _exchange(parsed, response, calls, errors, prompt, summaries=None, prefix="") -> dict:
        exchange = {"response": response, "reply": dict(parsed.sections) if parsed else {},
                    "calls": calls, "format_errors": errors, "summaries": summaries or {},
                    "stable_prefix_chars": len(prefix)}
        if prompt is not None:  # none when the model failed before the prompt was made
            exchange["prompt"] = prompt
        return exchange

    # -- the loop ------------------------------------------------------------------------
    def run_until_done(self) -> LoopOutcome:
        while not self.run.ended:
            if self.should_stop():
                return LoopOutcome("interrupted")
            limit = self.limit_reached()
            if limit:
                self.run.finish(f"{limit}_limit", detail=f"the run's {limit} limit was reached")
                return LoopOutcome(f"{limit}_limit", FailureMode.LIMIT_REACHED, f"{limit} limit")
            outcome = self.step()
            if outcome is not None:
                return outcome
        reason = self.run.end_reason or "ended"
        if reason.endswith("_limit"):
            return LoopOutcome(reason, FailureMode.LIMIT_REACHED, reason.replace("_", " "))
        return LoopOutcome(reason)
