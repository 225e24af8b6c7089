"""Which dialect serves a path, and the answers the gateway gives without a model call (model
lists, token counts)."""
from __future__ import annotations

import re
from urllib.parse import parse_qs, unquote, urlsplit

from mlab.external.dialects import Ask, anthropic, chat, gemini, responses
from mlab.models.client import TIERS

GEMINI_MODELS = re.compile(r"^/(?:v1|v1beta|v1alpha)/models(?:/([^/:]+))?$")


def route(method: str, url: str, headers) -> tuple[object, str, dict] | None:
    """(dialect module, operation, what the path says of the request) of a request's URL; None when
    the gateway serves no such path."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if method == "POST":
        if path in ("/v1/chat/completions", "/chat/completions"):
            return chat, "reply", {}
        if path in ("/v1/responses", "/responses"):
            return responses, "reply", {}
        if path in ("/v1/responses/compact", "/responses/compact"):
            return responses, "reply", {"compact": True}
        if path in ("/v1/messages", "/messages"):
            return anthropic, "reply", {}
        if path in ("/v1/messages/count_tokens", "/messages/count_tokens"):
            return anthropic, "count", {}
        found = gemini.PATH.match(path)
        if found:
            model, method_name = unquote(found[1]), found[2]
            sse = (parse_qs(parts.query).get("alt") or [""])[0] == "sse"
            return gemini, "count" if method_name == "countTokens" else "reply", \
                {"model": model, "stream": method_name == "streamGenerateContent", "sse": sse}
    elif path in ("/v1/models", "/models"):
        return (anthropic if headers.get("anthropic-version") else chat), "models", {}
    elif GEMINI_MODELS.match(path):
        return gemini, "models", {"model": unquote(GEMINI_MODELS.match(path)[1] or "")}
    return None


def dialect_of(url: str, headers):
    """The dialect whose errors a request on this path gets (for a path the gateway does not serve)."""
    path = urlsplit(url).path
    if "/messages" in path or headers.get("anthropic-version"):
        return anthropic
    if "/responses" in path:
        return responses
    if path.startswith(("/v1beta/", "/v1alpha/")) or ":" in path or headers.get("x-goog-api-key"):
        return gemini
    return chat


def count_tokens(client, tier: str, ask: Ask) -> int:
    """The prompt tokens of a request, counted as the model client counts a reply without usage."""
    from mlab.models import tokens
    from mlab.models.prices import is_offline

    model = getattr(getattr(client, "tiers", {}).get(tier), "model", "mlab/")
    if is_offline(model):
        return tokens.count_messages(ask.messages, ask.tools)
    from mlab.models.client import count_messages, import_litellm

    return count_messages(import_litellm(), ask.messages, ask.tools, model)


def models_body(dialect, model: str = "") -> dict:
    """The models a dialect lists: the run's tiers (any other name is served by the main tier)."""
    if dialect is gemini:
        return gemini.model_body(model) if model else gemini.models_body(TIERS)
    if dialect is anthropic:
        data = [{"type": "model", "id": t, "display_name": t, "created_at": "2026-01-01T00:00:00Z"} for t in TIERS]
        return {"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]}
    return {"object": "list", "data": [{"id": t, "object": "model", "owned_by": "mlab"} for t in TIERS]}
