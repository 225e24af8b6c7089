"""Token counts of offline models, estimated without a tokenizer.

An offline `mlab/` model has no tokenizer of its own and reports no usage, so its calls are
counted here: one token per started four bytes of UTF-8 text (the usual rule of thumb for
English text and code under OpenAI's tokenizers), and for a conversation the few tokens of
framing each message costs as OpenAI's chat format counts them. Loading a real tokenizer
(tiktoken's cl100k table) for these simulated counts cost about 40 MB of the harness's memory;
a real provider that reports no usage is still counted with litellm's tokenizer
(mlab.models.client).
"""
from __future__ import annotations

import json
import sys

BYTES_PER_TOKEN = 4
PER_MESSAGE = 3  # the role and the separators around each message
REPLY_PRIMING = 3  # the start of the assistant's reply


def count_text(text: str) -> int:
    """Estimated tokens of a text: 0 for an empty one, else one per started four bytes."""
    if not text:
        return 0
    size = len(text.encode("utf-8", "surrogatepass"))
    return -(-size // BYTES_PER_TOKEN)


def count_messages(messages: list[dict], tools: list[dict] | None = None) -> int:
    """Estimated prompt tokens of a conversation (OpenAI-form messages) and its tools."""
    total = REPLY_PRIMING
    for message in messages:
        total += PER_MESSAGE
        for key, value in message.items():
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            total += count_text(text)
    if tools:
        total += count_text(json.dumps(tools, ensure_ascii=False))
    return total


class DeferredEncoding:
    """litellm's default tokenizer (tiktoken's cl100k table, about 40 MB), loaded on its first use.

    litellm hands its default encoding to every provider's handler, most of which never use it
    (the offline ones never do: mlab.models.tokens counts their tokens), so it is loaded only
    when a handler or counter actually encodes or decodes with it."""

    def __init__(self, load):
        self._load = load
        self._real = None

    def __getattr__(self, name):
        if self._real is None:
            self._real = self._load()
        return getattr(self._real, name)


def defer_encoding() -> None:
    """Give litellm's call path a deferred default encoding where it would load it on the first call."""
    main = sys.modules.get("litellm.main")
    try:
        from litellm._lazy_imports import get_default_encoding
    except ImportError:  # another litellm layout: it loads its encoding as it does
        return
    if main is not None and getattr(main, "_encoding_cache", False) is None and "encoding" not in vars(main):
        main._encoding_cache = DeferredEncoding(get_default_encoding)
