"""What a failed provider call was: whether to retry it, mlab's own error inside litellm's (a
response the transport refused), one line that describes it, and whether the server refused the
request's tools."""
from __future__ import annotations

import re

from mlab.models.errors import ModelError


def retryable(litellm, error: Exception) -> bool:
    kinds = (litellm.RateLimitError, litellm.InternalServerError, litellm.ServiceUnavailableError,
             litellm.Timeout, litellm.APIConnectionError, getattr(litellm, "BadGatewayError", ()))
    return isinstance(error, tuple(k for k in kinds if isinstance(k, type)))


def model_error_inside(error: BaseException) -> ModelError | None:
    """mlab's own error (ModelError, e.g. the transport's ResponseRefused), which litellm wraps in
    its exception types."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, ModelError):
            return error
        error = getattr(error, "original_exception", None) or error.__cause__ or error.__context__
    return None


def describe(litellm, error: Exception, api_base: str | None) -> str:
    """One line for a failed call: the error's kind and first line, and for a connection that
    failed at --api-base, that the URL could not be reached (`litellm` None: an offline model's)."""
    kind = type(error).__name__
    text = str(error).splitlines()[0][:300] if str(error).strip() else kind
    if litellm is not None and isinstance(error, litellm.Timeout):
        return f"{kind}: no answer within the time-out ({text})"
    if api_base and connection_failed(error):  # plainly first (what the retry line shows), then litellm's text
        return f"cannot reach {api_base}: {deepest_reason(error)} ({kind}: {text})"
    return f"{kind}: {text}"


def deepest_reason(error: BaseException) -> str:
    """The innermost cause's text, e.g. 'connection refused' from '[Errno 111] Connection refused'."""
    seen, reason = set(), ""
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        reason = str(error).strip().splitlines()[0] if str(error).strip() else reason
        error = getattr(error, "original_exception", None) or error.__cause__ or error.__context__
    reason = re.sub(r"^\[Errno -?\d+\]\s*", "", reason)[:200] or "no connection"
    return reason[0].lower() + reason[1:]


def connection_failed(error: BaseException) -> bool:
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


# How servers word a refusal of the `tools` field (vLLM without a tool-call parser, Ollama models
# without tool support, llama.cpp without --jinja, OpenAI-compatible servers that reject the field).
_TOOLS_WORDS = re.compile(r"tool|function", re.I)


def tools_refused(litellm, error: Exception) -> bool:
    """Whether a failed call with tools failed because the server does not take tools: a request
    error (or litellm's unsupported-parameter error) that names tools or function calling."""
    kinds = tuple(k for k in (getattr(litellm, "BadRequestError", None), getattr(litellm, "UnsupportedParamsError", None),
                              getattr(litellm, "UnprocessableEntityError", None)) if isinstance(k, type))
    return isinstance(error, kinds) and bool(_TOOLS_WORDS.search(str(error)))
