"""Which dialect serves a path, and the answers the gateway gives without a model call (model
lists, token counts)."""
from __future__ import annotations

from mlab.external.dialects import Ask, anthropic, chat, responses
from mlab.models.client import TIERS


def route(method: str, path: str, headers) -> tuple[object, str] | None:
    """(dialect module, operation) of a request path; None when the gateway serves no such path."""
    path = path.rstrip("/")
    if method == "POST":
        if path in ("/v1/chat/completions", "/chat/completions"):
            return chat, "reply"
        if path in ("/v1/responses", "/responses"):
            return responses, "reply"
        if path in ("/v1/messages", "/messages"):
            return anthropic, "reply"
        if path in ("/v1/messages/count_tokens", "/messages/count_tokens"):
            return anthropic, "count"
    elif path in ("/v1/models", "/models"):
        return (anthropic if headers.get("anthropic-version") else chat), "models"
    return None


def dialect_of(path: str, headers):
    """The dialect whose errors a request on this path gets (for a path the gateway does not serve)."""
    if "/messages" in path or headers.get("anthropic-version"):
        return anthropic
    if "/responses" in path:
        return responses
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


def models_body(dialect) -> dict:
    if dialect is anthropic:
        data = [{"type": "model", "id": t, "display_name": t, "created_at": "2026-01-01T00:00:00Z"} for t in TIERS]
        return {"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]}
    return {"object": "list", "data": [{"id": t, "object": "model", "owned_by": "mlab"} for t in TIERS]}
