"""Model calls: every call goes through litellm, real providers and offline ones alike.

Offline models are litellm custom providers under the prefix `mlab/` (see
mlab.models.offline), so tests and demos take exactly the path real runs take.
Each call is retried with backoff on rate limits, server errors and time-outs;
usage comes from the provider's reply (counted locally only where none is
reported) and cost from litellm's price map, `None` (unknown) when unpriced.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

from mlab.models.errors import MissingKey, ModelError, RepliesExhausted
from mlab.models.offline import OFFLINE_METADATA, OfflineModels
from mlab.observation import utf8_safe

TIERS = ("main", "fast", "edit")
OFFLINE_PREFIX = "mlab/"


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

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class Usage:
    """Tokens and cost of a run's model calls so far, per tier; cost is None once any call had no price."""

    tokens: dict[str, dict[str, int]] = field(default_factory=dict)
    cost: float | None = 0.0
    calls: int = 0

    @classmethod
    def from_records(cls, records: list[dict]) -> "Usage":
        """Summed over every model call recorded in a trace."""
        usage = cls()
        for record in records:
            for call in (record.get("model") or {}).get("calls", []):
                usage.add(call)
        return usage

    def add(self, call: dict) -> None:
        tier = self.tokens.setdefault(call.get("tier", "main"), {"prompt": 0, "completion": 0, "cached": 0})
        tier["prompt"] += call.get("prompt_tokens", 0)
        tier["completion"] += call.get("completion_tokens", 0)
        tier["cached"] += call.get("cached_tokens", 0)
        self.calls += 1
        self.cost = None if self.cost is None or call.get("cost") is None else self.cost + call["cost"]

    @property
    def total_tokens(self) -> int:
        return sum(t["prompt"] + t["completion"] for t in self.tokens.values())


def import_litellm():
    """Import litellm without letting it reach the network."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    from mlab.models import offline

    offline.register(litellm)
    return litellm


def is_offline(model: str) -> bool:
    return model.startswith(OFFLINE_PREFIX)


KEYLESS_PROVIDERS = ("ollama", "ollama_chat", "hosted_vllm", "lm_studio", "llamafile")


TIER_OPTIONS = {"main": "--model", "fast": "--fast-model", "edit": "--edit-model"}


def check_keys(models, api_base: str | None = None) -> None:
    """Raise MissingKey naming the environment variable a model needs.

    `models` is a list of model names, or a mapping of tier to model name, in which case the
    message also names the tiers that use the model and the options that choose another.
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
                                 f"for a keyless run use --model mlab/demo")
            continue
        litellm = litellm or import_litellm()
        try:
            found = litellm.validate_environment(model=model)
        except Exception:  # an unknown provider: let the call itself say so
            continue
        missing = found.get("missing_keys") or []
        if not found.get("keys_in_environment") and missing:
            instead = f"set it or choose another model with {_listed([TIER_OPTIONS[t] for t in tiers], 'or')}; " \
                if tiers else ""
            raise MissingKey(f"{_who(model, tiers)} needs {' or '.join(missing)} in the environment; "
                             f"{instead}for a keyless run use --model mlab/demo")


def _who(model: str, tiers: list[str]) -> str:
    """'model M', or 'the fast and edit tiers' model M'."""
    if not tiers:
        return f"model {model}"
    return f"the {_listed(tiers, 'and')} tier{'s' if len(tiers) > 1 else ''}' model {model}".replace("tier' ",
                                                                                                       "tier's ")


def _listed(words: list[str], conjunction: str) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {conjunction} {words[-1]}"


def _retryable(litellm, error: Exception) -> bool:
    kinds = (litellm.RateLimitError, litellm.InternalServerError, litellm.ServiceUnavailableError,
             litellm.Timeout, litellm.APIConnectionError, getattr(litellm, "BadGatewayError", ()))
    return isinstance(error, tuple(k for k in kinds if isinstance(k, type)))


def _model_error_inside(error: BaseException) -> ModelError | None:
    """An offline model's own error, which litellm wraps in its exception types."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, ModelError):
            return error
        error = getattr(error, "original_exception", None) or error.__cause__ or error.__context__
    return None


def _say_on_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _describe(error: Exception, api_base: str | None) -> str:
    """One line for a failed call: the error's kind and first line, and for a connection that
    failed at --api-base, that the URL could not be reached."""
    kind = type(error).__name__
    text = str(error).splitlines()[0][:300] if str(error).strip() else kind
    litellm = import_litellm()
    if isinstance(error, litellm.Timeout):
        return f"{kind}: no answer within the time-out ({text})"
    if api_base and _connection_failed(error):
        return f"cannot reach {api_base} ({kind}: {text})"
    return f"{kind}: {text}"


def _connection_failed(error: BaseException) -> bool:
    """Whether a call failed because no connection could be made (litellm reports a refused
    connection as an InternalServerError whose cause is the client library's connection error)."""
    import httpx

    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, (ConnectionError, httpx.ConnectError)) or "Connection error" in str(error):
            return True
        error = getattr(error, "original_exception", None) or error.__cause__ or error.__context__
    return False


class MalformedResponse(Exception):
    """A provider's response that cannot be used (no choices, no message, content not text): a
    model fault, retried like a server error."""


def reply_text(response) -> str:
    """The text of a completion response's first choice, after checking that it is one."""
    choices = getattr(response, "choices", None)
    if not isinstance(choices, (list, tuple)) or not choices:
        raise MalformedResponse("the response has no choices")
    message = getattr(choices[0], "message", None)
    if message is None and isinstance(choices[0], dict):
        message = choices[0].get("message")
    if message is None:
        raise MalformedResponse("the response's first choice has no message")
    content = message.get("content") if isinstance(message, dict) else getattr(message, "content", None)
    if content is None:
        return ""  # a reply of tool calls only, or an empty one: the format error says what is missing
    if not isinstance(content, str):
        raise MalformedResponse(f"the response's message content is {type(content).__name__}, not text")
    return content


def _usage_counts(usage) -> tuple[int, int, int] | None:
    """(prompt, completion, cached) tokens a provider reported; None when it reported none usable."""
    def count(value) -> int | None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            return None
        return int(value)

    prompt = count(getattr(usage, "prompt_tokens", None))
    if usage is None or prompt is None:
        return None
    details = getattr(usage, "prompt_tokens_details", None)
    return (prompt, count(getattr(usage, "completion_tokens", 0) or 0) or 0,
            count(getattr(details, "cached_tokens", 0) or 0) or 0 if details else 0)


def split_prefix(messages: list[dict], prefix: str | None, model: str) -> list[dict]:
    """Mark the stable start of the prompt for provider prompt caching where it helps."""
    if not prefix or is_offline(model):
        return messages
    provider = model.split("/")[0]
    litellm = import_litellm()
    try:
        caching = provider == "anthropic" or litellm.utils.supports_prompt_caching(model=model)
    except Exception:
        caching = False
    if not caching or provider != "anthropic":
        return messages  # OpenAI-style providers cache a repeated prefix without marking
    content = messages[-1]["content"]
    if not content.startswith(prefix):
        return messages
    marked = [{"type": "text", "text": prefix, "cache_control": {"type": "ephemeral"}},
              {"type": "text", "text": content[len(prefix):] or " "}]
    return messages[:-1] + [{"role": messages[-1]["role"], "content": marked}]


class ModelClient:
    """Calls the model of a tier; one client per run."""

    def __init__(self, tiers: dict[str, TierConfig], *, api_base: str | None = None, seed: int | None = None,
                 max_attempts: int = 5, timeout_s: float = 600.0, backoff_s: float = 1.0,
                 sleep: Callable[[float], None] = time.sleep, offline: OfflineModels | None = None,
                 on_retry: Callable[[str], None] | None = None):
        self.tiers = tiers
        self.offline = offline if offline is not None else OfflineModels()  # this client's offline models
        self.api_base = api_base
        self.seed = seed
        self.max_attempts = max_attempts
        self.timeout_s = timeout_s
        self.backoff_s = backoff_s
        self.sleep = sleep
        self.on_retry = on_retry if on_retry is not None else _say_on_stderr  # one line per retry

    def complete(self, tier: str, prompt: str, *, purpose: str, stable_prefix: str | None = None) -> ModelCall:
        """One completion of `prompt` (a user message) by the tier's model."""
        config = self.tiers[tier]
        litellm = import_litellm()
        prompt = utf8_safe(prompt)  # a reply or a file name may hold a lone surrogate, which no API takes
        stable_prefix = utf8_safe(stable_prefix) if stable_prefix else stable_prefix
        messages = split_prefix([{"role": "user", "content": prompt}], stable_prefix, config.model)
        kwargs = dict(config.params)
        kwargs.setdefault("timeout", self.timeout_s)
        if self.api_base and not is_offline(config.model):
            kwargs["api_base"] = self.api_base
        if self.seed is not None and not is_offline(config.model):
            kwargs["seed"] = self.seed
            kwargs["drop_params"] = True  # providers without a seed parameter ignore it
        if is_offline(config.model):
            kwargs["metadata"] = {"mlab_tier": tier, "mlab_purpose": purpose, OFFLINE_METADATA: self.offline}
        start = time.monotonic()
        for attempt in range(1, self.max_attempts + 1):
            try:
                response = litellm.completion(model=config.model, messages=messages, num_retries=0, **kwargs)
                text = reply_text(response)
                break
            except ModelError:
                raise
            except Exception as error:  # litellm maps provider errors to its own exception types
                inner = _model_error_inside(error)
                if inner is not None:
                    raise inner from None
                retry = isinstance(error, MalformedResponse) or _retryable(litellm, error)
                served = self.api_base if not is_offline(config.model) else None
                what = _describe(error, served)
                at_url = served and not what.startswith("cannot reach")  # the URL said once
                where = f"{config.model} at {served}" if at_url else config.model
                if attempt == self.max_attempts or is_offline(config.model) or not retry:
                    raise ModelError(f"{where} failed after {attempt} attempt(s): {what}") from None
                delay = min(self.backoff_s * 2 ** (attempt - 1), 60.0)
                self.on_retry(f"mlab: {where}: {what}; retrying in {delay:g}s "
                              f"(attempt {attempt + 1} of {self.max_attempts})")
                self.sleep(delay)
        return self._account(litellm, response, text, tier, config.model, purpose, prompt, attempt,
                             time.monotonic() - start)

    def _account(self, litellm, response, text, tier, model, purpose, prompt, attempts, latency) -> ModelCall:
        usage = getattr(response, "usage", None)
        call = ModelCall(tier=tier, model=model, purpose=purpose, latency_s=round(latency, 4),
                         attempts=attempts, response=text)
        counts = _usage_counts(usage) if not is_offline(model) else None
        if counts is not None:
            call.prompt_tokens, call.completion_tokens, call.cached_tokens = counts
        else:
            call.usage_reported = False
            call.prompt_tokens = litellm.token_counter(model="gpt-3.5-turbo", text=prompt)
            call.completion_tokens = litellm.token_counter(model="gpt-3.5-turbo", text=text)
        if is_offline(model):
            call.cost = 0.0
        else:
            try:
                call.cost = float(litellm.completion_cost(completion_response=response))
            except Exception:
                call.cost = None  # not in the price map: unknown, not free
        return call
