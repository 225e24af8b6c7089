"""Model calls: through litellm to a provider, or answered here by an offline model.

Offline models (the prefix `mlab/`, see mlab.models.offline) are answered by the client's own
OfflineModels without importing litellm (about 4 s of CPU a process); their reply is read,
counted, charged and recorded on the same path as a provider's.
Each provider call is retried with backoff on rate limits, server errors and time-outs;
usage comes from the provider's reply (counted locally only where none is
reported; estimated for the offline models, which have no tokenizer) and cost from litellm's price map,
`None` (unknown) when unpriced; an offline call costs 0.

`complete` sends one user message and returns its text (text agents, summaries, model-backed
actions); `chat` sends a conversation with optional tools (tool agents) and keeps the
assistant message verbatim, tool calls and the provider's reasoning fields included, since
the conversation of the next step has to echo it back unchanged.
"""
from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

from mlab.models import prices, tokens
from mlab.models.errors import MissingKey, ModelError, ToolsRefused, lookup_errors
from mlab.models.failures import describe, model_error_inside, retryable, tools_refused
from mlab.models.offline import OfflineModels
from mlab.models.prices import is_offline
from mlab.models.usage import Budget
from mlab.models.response import MalformedResponse, finish_reason, reply_message, reply_text, stream_pieces, usage_counts
from mlab.text import utf8_safe

TIERS = ("main", "fast", "edit")


@dataclass(frozen=True)
class TierConfig:
    model: str
    params: dict = field(default_factory=dict)


@dataclass
class ModelCall:
    """What one call cost; recorded per call in the trace."""

    tier: str
    model: str
    purpose: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost: float | None = None
    latency_s: float = 0.0
    attempts: int = 1
    usage_reported: bool = True
    response: str = ""
    message: dict | None = None  # chat calls: the assistant message verbatim (OpenAI form)
    cache_write_tokens: int = 0  # prompt tokens the provider wrote to its prompt cache (recorded when any)
    finish_reason: str | None = None  # why the reply ended (stop, length, tool_calls): not recorded

    def to_json(self) -> dict:
        document = asdict(self)
        if document["message"] is None:  # a completion call's record stays as it was
            del document["message"]
        if not document["cache_write_tokens"]:
            del document["cache_write_tokens"]
        del document["finish_reason"]
        return document


def import_litellm():
    """Import litellm without letting it reach the network."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    tokens.defer_encoding()
    from mlab.models import transport

    transport.install(litellm)
    return litellm


def import_litellm_for(models) -> None:
    """Import litellm now (before a run's clock starts: a slow import is not the agent's time) when
    any of `models` is a provider's; a run of offline models never imports it."""
    if not all(is_offline(model) for model in models):
        import_litellm()


KEYLESS_PROVIDERS = ("ollama", "ollama_chat", "hosted_vllm", "lm_studio", "llamafile")


TIER_OPTIONS = {"main": "--model", "fast": "--fast-model", "edit": "--edit-model"}


def check_keys(models, api_base: str | None = None, hint: str | None = None) -> None:
    """Raise MissingKey naming the environment variable a model needs.

    `models` is a list of model names, or a mapping of tier to model name, in which case the
    message also names the tiers that use the model and the options that choose another.
    `hint` replaces what the message says to do (which names `mlab run`'s options) for a verb
    that takes other ones.
    With --api-base the server decides what it accepts, so only the variable the client
    library itself insists on is checked: litellm's `openai/` client refuses to start
    without OPENAI_API_KEY even for a local server that ignores it.
    """
    by_model: dict[str, list[str]] = {}
    for tier, model in (models.items() if isinstance(models, dict) else ((None, m) for m in models)):
        by_model.setdefault(model, [])
        if tier is not None:
            by_model[model].append(tier)
    litellm = None
    for model, tiers in by_model.items():
        provider = model.split("/")[0]
        if is_offline(model) or provider in KEYLESS_PROVIDERS:
            continue
        if api_base:
            if provider == "openai" and not os.environ.get("OPENAI_API_KEY"):
                raise MissingKey(f"{_who(model, tiers)} at {api_base} needs OPENAI_API_KEY in the environment "
                                 f"(any value, e.g. OPENAI_API_KEY=none, for a server that takes no key); "
                                 f"{hint or 'for a keyless run use --model mlab/demo'}")
            continue
        litellm = litellm or import_litellm()
        try:
            found = litellm.validate_environment(model=model)
        except lookup_errors(litellm):  # a provider litellm does not know: the call itself says so
            continue
        missing = found.get("missing_keys") or []
        if not found.get("keys_in_environment") and missing:
            instead = f"set it or choose another model with {_listed([TIER_OPTIONS[t] for t in tiers], 'or')}; " \
                if tiers else ""
            raise MissingKey(f"{_who(model, tiers)} needs {' or '.join(missing)} in the environment; "
                             + (hint or f"{instead}for a keyless run use --model mlab/demo"))


def _who(model: str, tiers: list[str]) -> str:
    """'model M', or 'the fast and edit tiers' model M'."""
    if not tiers:
        return f"model {model}"
    return f"the {_listed(tiers, 'and')} tier{'s' if len(tiers) > 1 else ''}' model {model}".replace("tier' ",
                                                                                                       "tier's ")


def _listed(words: list[str], conjunction: str) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {conjunction} {words[-1]}"


def _say_on_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def split_prefix(messages: list[dict], prefix: str | None, model: str) -> list[dict]:
    """Mark the stable start of the prompt for provider prompt caching where it helps."""
    if not prefix or is_offline(model):
        return messages
    provider = model.split("/")[0]
    litellm = import_litellm()
    try:
        caching = provider == "anthropic" or litellm.utils.supports_prompt_caching(model=model)
    except lookup_errors(litellm):  # not in litellm's table: send the prompt unmarked
        caching = False
    if not caching or provider != "anthropic":
        return messages  # OpenAI-style providers cache a repeated prefix without marking
    content = messages[-1]["content"]
    if not content.startswith(prefix):
        return messages
    marked = [{"type": "text", "text": prefix, "cache_control": {"type": "ephemeral"}},
              {"type": "text", "text": content[len(prefix):] or " "}]
    return messages[:-1] + [{"role": messages[-1]["role"], "content": marked}]


def mark_cache(messages: list[dict], tools: list[dict] | None, model: str) -> tuple[list[dict], list[dict] | None]:
    """Cache marks on the stable start of a conversation, for providers that need them marked
    (Anthropic): on the system message and on the last tool, never on the changing last user
    message. Other providers cache a repeated prefix without marks; the inputs are not changed."""
    if is_offline(model) or model.split("/")[0] != "anthropic":
        return messages, tools
    mark = {"type": "ephemeral"}
    marked = []
    for message in messages:
        if message.get("role") == "system" and isinstance(message.get("content"), str) and message["content"]:
            message = dict(message, content=[{"type": "text", "text": message["content"], "cache_control": mark}])
        marked.append(message)
    if tools:
        tools = tools[:-1] + [dict(tools[-1], cache_control=mark)]
    return marked, tools


def _common_messages(one: list[dict], other: list[dict]) -> int:
    """How many leading messages two conversations share."""
    count = 0
    for a, b in zip(one, other):
        if a != b:
            break
        count += 1
    return count


class ModelClient:
    """Calls the model of a tier; one client per run."""

    def __init__(self, tiers: dict[str, TierConfig], *, api_base: str | None = None, seed: int | None = None,
                 max_attempts: int = 5, timeout_s: float = 600.0, backoff_s: float = 1.0,
                 sleep: Callable[[float], None] = time.sleep, offline: OfflineModels | None = None,
                 on_retry: Callable[[str], None] | None = None, max_response_bytes: int | None = None):
        self.tiers = tiers
        self.max_response_bytes = max_response_bytes  # None: mlab.models.decode.MAX_RESPONSE_BYTES
        self.offline = offline if offline is not None else OfflineModels()  # this client's offline models
        self.api_base = api_base
        self.seed = seed
        self.max_attempts = max_attempts
        self.timeout_s = timeout_s
        self.backoff_s = backoff_s
        self.sleep = sleep
        self.on_retry = on_retry if on_retry is not None else _say_on_stderr  # one line per retry
        self._previous: dict = {}  # per kind and tier, what the last offline call sent (its simulated cache)
        self.refused: dict[str, set] = {}  # per tier, the tool settings its server refused
        # the run's token and cost limits, checked before every call (main step, helper action,
        # summary, hook, tree operator, review) and charged with each call as it is made
        self.budget: Budget | None = None

    def complete(self, tier: str, prompt: str, *, purpose: str, stable_prefix: str | None = None) -> ModelCall:
        """One completion of `prompt` (a user message) by the tier's model."""
        config = self.tiers[tier]
        self._check_budget()
        litellm = None if is_offline(config.model) else import_litellm()
        prompt = utf8_safe(prompt)  # a reply or a file name may hold a lone surrogate, which no API takes
        stable_prefix = utf8_safe(stable_prefix) if stable_prefix else stable_prefix
        messages = split_prefix([{"role": "user", "content": prompt}], stable_prefix, config.model)
        response, text, attempts, latency = self._send(litellm, tier, purpose, messages, {}, reply_text)
        call = self._account(litellm, response, text, tier, config.model, purpose, prompt, attempts, latency)
        if is_offline(config.model) and stable_prefix and prompt.startswith(stable_prefix):
            # a provider's prefix cache, simulated: the stable prefix is served from the cache when
            # the tier's previous prompt began with it too
            key = ("complete", tier)
            if self._previous.get(key) == stable_prefix:
                call.cached_tokens = min(tokens.count_text(stable_prefix), call.prompt_tokens)
            self._previous[key] = stable_prefix
        return self._charged(call)

    def chat(self, tier: str, messages: list[dict], *, tools: list[dict] | None = None, tool_choice=None,
             parallel_tool_calls: bool | None = None, purpose: str = "step") -> ModelCall:
        """One reply of the tier's model to a conversation (OpenAI-form messages), with `tools` when
        given; ModelCall.message is the assistant message verbatim. A server that refuses the tools
        field raises ToolsRefused, so that a tool agent can continue in its fallback format."""
        config = self.tiers[tier]
        self._check_budget()
        litellm = None if is_offline(config.model) else import_litellm()
        messages = [_safe_message(m) for m in messages]
        sent, sent_tools = mark_cache(messages, tools, config.model)
        extra = self._tool_settings(tier, sent_tools, tool_choice, parallel_tool_calls)
        while True:
            try:
                response, message, attempts, latency = self._send(litellm, tier, purpose, sent, extra, reply_message,
                                                                  tools=bool(sent_tools))
                break
            except ToolsRefused as refused:
                # a server that takes tools but not one of the settings (the parallel-calls switch, a
                # tool_choice other than auto, as llama.cpp's function-calling handler): ask without
                # it from now on; the agent loop still checks that each reply makes one usable call
                said = str(refused).lower()
                if "parallel_tool_calls" in extra and "parallel" in said:
                    del extra["parallel_tool_calls"]
                    self.refused.setdefault(tier, set()).add("parallel_tool_calls")
                elif extra.get("tool_choice") not in (None, "auto") and "tool_choice" in said:
                    extra["tool_choice"] = "auto"
                    self.refused.setdefault(tier, set()).add("tool_choice")
                else:
                    raise
        return self._chat_call(litellm, tier, purpose, response, message, messages, tools, attempts, latency)

    def chat_stream(self, tier: str, messages: list[dict], *, tools: list[dict] | None = None, tool_choice=None,
                    parallel_tool_calls: bool | None = None, purpose: str = "step",
                    on_delta: Callable[[tuple], None]) -> ModelCall:
        """`chat`, with the reply streamed from the provider: `on_delta` gets each piece as it arrives
        (("text", piece), ("reasoning", piece), ("signature", text), ("tool", index, id, name, piece)),
        and the call is returned at the end as `chat` returns it. An offline model does not stream:
        its reply comes whole, with no delta. A failure before the first piece is retried as `chat`
        retries; after it, it is the call's failure."""
        config = self.tiers[tier]
        if is_offline(config.model):
            return self.chat(tier, messages, tools=tools, tool_choice=tool_choice,
                             parallel_tool_calls=parallel_tool_calls, purpose=purpose)
        self._check_budget()
        litellm = import_litellm()
        messages = [_safe_message(m) for m in messages]
        sent, sent_tools = mark_cache(messages, tools, config.model)
        extra = self._tool_settings(tier, sent_tools, tool_choice, parallel_tool_calls)
        extra.update(stream=True, stream_options={"include_usage": True})
        from mlab.models.transport import MAX_RESPONSE_BYTES, ResponseRefused, bounded

        kwargs = self._settings(tier, extra)
        start = time.monotonic()
        for attempt in range(1, self.max_attempts + 1):
            chunks: list = []
            try:
                with bounded(self.timeout_s, self.max_response_bytes or MAX_RESPONSE_BYTES):
                    for chunk in litellm.completion(model=config.model, messages=sent, num_retries=0, **kwargs):
                        chunks.append(chunk)
                        for delta in stream_pieces(chunk):
                            on_delta(delta)
                response = litellm.stream_chunk_builder(chunks, messages=sent)
                message = reply_message(response)
                if message.get("tool_calls"):  # the bounds the transport puts on a whole reply's calls
                    from mlab.models.transport import screen_body

                    screened = screen_body(json.dumps({"choices": [{"message": message}]}).encode())
                    message = json.loads(screened)["choices"][0]["message"]
                break
            except ModelError:
                raise
            except Exception as error:  # litellm maps provider errors to its own exception types
                inner = model_error_inside(error)
                if isinstance(inner, ResponseRefused):
                    raise ModelError(f"{config.model} sent a response that was refused: {inner}") from None
                what = describe(litellm, error, self.api_base)
                retry = not chunks and (isinstance(error, MalformedResponse) or retryable(litellm, error))
                if attempt == self.max_attempts or not retry:
                    raise ModelError(f"{config.model} failed after {attempt} attempt(s): {what}") from None
                delay = min(self.backoff_s * 2 ** (attempt - 1), 60.0)
                self.on_retry(f"mlab: {config.model}: {what}; retrying in {delay:g}s "
                              f"(attempt {attempt + 1} of {self.max_attempts})")
                self.sleep(delay)
        return self._chat_call(litellm, tier, purpose, response, message, messages, tools, attempt,
                               time.monotonic() - start)

    def _tool_settings(self, tier: str, sent_tools, tool_choice, parallel_tool_calls) -> dict:
        extra: dict = {}
        if sent_tools:
            extra["tools"] = sent_tools
            if tool_choice is not None:
                extra["tool_choice"] = tool_choice
            if parallel_tool_calls is not None and "parallel_tool_calls" not in self.refused.get(tier, ()):
                extra["parallel_tool_calls"] = parallel_tool_calls
            if tool_choice is not None and "tool_choice" in self.refused.get(tier, ()):
                extra["tool_choice"] = "auto"
        return extra

    def _chat_call(self, litellm, tier, purpose, response, message, messages, tools, attempts, latency) -> ModelCall:
        """The ModelCall of a chat reply: tokens as reported (counted where none were), cost, charged."""
        config = self.tiers[tier]
        text = message.get("content") or ""
        call = ModelCall(tier=tier, model=config.model, purpose=purpose, latency_s=round(latency, 4),
                         attempts=attempts, response=text, message=message)
        call.finish_reason = finish_reason(response)
        usage = getattr(response, "usage", None)
        counts = usage_counts(usage) if not is_offline(config.model) else None
        if counts is not None:
            call.prompt_tokens, call.completion_tokens, call.cached_tokens = counts
            call.cache_write_tokens = prices.cache_write_tokens(usage)
        else:
            call.usage_reported = False
            call.prompt_tokens = count_messages(litellm, messages, tools, config.model)
            written = text + "".join((c["function"].get("name") or "") + (c["function"].get("arguments") or "")
                                     for c in message.get("tool_calls", []))
            call.completion_tokens = _count_text(litellm, written, config.model)
        if is_offline(config.model):
            key = ("chat", tier)
            previous_tools, previous = self._previous.get(key, (None, []))
            shared = _common_messages(previous, messages) if previous_tools == tools else 0
            if shared:  # a provider's prefix cache, simulated: the leading messages the last call sent too
                call.cached_tokens = min(tokens.count_messages(messages[:shared], tools), call.prompt_tokens)
            self._previous[key] = (tools, messages)
        call.cost = 0.0 if is_offline(config.model) else prices.response_cost(litellm, response, config.model)
        return self._charged(call)

    def _check_budget(self) -> None:
        if self.budget is not None:
            self.budget.check()

    def _charged(self, call: ModelCall) -> ModelCall:
        if self.budget is not None:
            self.budget.spent.add(call.to_json())
        return call

    def _settings(self, tier: str, extra: dict) -> dict:
        """The keyword arguments of the tier's litellm call (a provider's model: an offline one makes none)."""
        kwargs = dict(self.tiers[tier].params)
        kwargs.update(extra)
        kwargs.setdefault("timeout", self.timeout_s)
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.seed is not None:
            kwargs["seed"] = self.seed
            kwargs["drop_params"] = True  # providers without a seed parameter ignore it
        return kwargs

    def _send(self, litellm, tier: str, purpose: str, messages: list[dict], extra: dict, read, tools: bool = False):
        """Call the tier's model, retrying as configured; (response, read(response), attempts, seconds).
        `litellm` is None for an offline model, which answers here."""
        config = self.tiers[tier]
        if litellm is None:
            return self._answer_offline(tier, purpose, messages, extra, read)
        kwargs = self._settings(tier, extra)
        from mlab.models.transport import MAX_RESPONSE_BYTES, ResponseRefused, bounded  # httpx: loaded by litellm

        start = time.monotonic()
        said = None  # the last retry line's failure: the same failure again is not said again
        for attempt in range(1, self.max_attempts + 1):
            try:
                # the time-out bounds the whole attempt in wall-clock time, not each read
                with bounded(self.timeout_s, self.max_response_bytes or MAX_RESPONSE_BYTES):
                    response = litellm.completion(model=config.model, messages=messages, num_retries=0, **kwargs)
                value = read(response)
                break
            except ModelError:
                raise
            except Exception as error:  # litellm maps provider errors to its own exception types
                inner = model_error_inside(error)
                served = self.api_base
                if isinstance(inner, ResponseRefused):
                    raise ModelError(f"{config.model}{f' at {served}' if served else ''} sent a response "
                                     f"that was refused: {inner}") from None
                if inner is not None:
                    raise inner from None
                what = describe(litellm, error, served)
                at_url = served and not what.startswith("cannot reach")  # the URL said once
                where = f"{config.model} at {served}" if at_url else config.model
                if tools and tools_refused(litellm, error):
                    raise ToolsRefused(f"{where} refused the tools of the request: {what}") from None
                retry = isinstance(error, MalformedResponse) or retryable(litellm, error)
                if attempt == self.max_attempts or not retry:
                    raise ModelError(f"{where} failed after {attempt} attempt(s): {what}") from None
                delay = min(self.backoff_s * 2 ** (attempt - 1), 60.0)
                plain = what.split(" (", 1)[0] if what.startswith("cannot reach") else what  # detail: in the error
                if plain != said:
                    said = plain
                    self.on_retry(f"mlab: {where}: {plain}; retrying in {delay:g}s "
                                  f"(attempt {attempt + 1} of {self.max_attempts})")
                self.sleep(delay)
        return response, value, attempt, time.monotonic() - start

    def _answer_offline(self, tier: str, purpose: str, messages: list[dict], extra: dict, read):
        """The tier's offline model answers: once (no provider, nothing to retry), its reply read as a
        provider's; (response, read(response), 1, seconds). Its own errors (RepliesExhausted) are the
        call's; any other fault of it ends the call as a model failure, in one line."""
        model = self.tiers[tier].model
        start = time.monotonic()
        try:
            response = self.offline.respond(model, tier, purpose, messages, extra.get("tools"))
            value = read(response)
        except ModelError:
            raise
        except Exception as error:
            raise ModelError(f"{model} failed after 1 attempt(s): {describe(None, error, None)}") from None
        return response, value, 1, time.monotonic() - start

    def _account(self, litellm, response, text, tier, model, purpose, prompt, attempts, latency) -> ModelCall:
        usage = getattr(response, "usage", None)
        call = ModelCall(tier=tier, model=model, purpose=purpose, latency_s=round(latency, 4),
                         attempts=attempts, response=text)
        counts = usage_counts(usage) if not is_offline(model) else None
        if counts is not None:
            call.prompt_tokens, call.completion_tokens, call.cached_tokens = counts
        else:
            call.usage_reported = False
            call.prompt_tokens = _count_text(litellm, prompt, model)
            call.completion_tokens = _count_text(litellm, text, model)
        call.cost = 0.0 if is_offline(model) else prices.response_cost(litellm, response, model)
        return call


def _count_text(litellm, text: str, model: str) -> int:
    """Tokens of a text counted locally: estimated for an offline model (mlab.models.tokens),
    by litellm's tokenizer for a provider that reported none."""
    if is_offline(model):
        return tokens.count_text(text)
    return litellm.token_counter(model="gpt-3.5-turbo", text=text) if text else 0


def count_messages(litellm, messages: list[dict], tools: list[dict] | None, model: str) -> int:
    """Prompt tokens of a conversation and its tools, counted locally (the tools array is part
    of the prompt a provider bills); estimated for an offline model."""
    if is_offline(model):
        return tokens.count_messages(messages, tools)
    try:
        return litellm.token_counter(model="gpt-3.5-turbo", messages=messages, tools=tools or None)
    except lookup_errors(litellm):  # a message shape the counter does not know: count its text
        return litellm.token_counter(model="gpt-3.5-turbo", text=json.dumps([messages, tools or []],
                                                                            ensure_ascii=False))


def _safe_message(message: dict) -> dict:
    """A message whose texts can be sent as UTF-8 (a lone surrogate written as an escape)."""
    def clean(value):
        if isinstance(value, str):
            return utf8_safe(value)
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value
    return clean(message)
