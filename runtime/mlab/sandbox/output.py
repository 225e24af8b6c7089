"""Bounded capture of a script's output: keep the head and the tail, count the rest."""
from __future__ import annotations

import codecs
from collections import deque
from typing import Callable


def cut_marker(omitted_chars: int) -> str:
    """The line that stands where output was left out."""
    return f"\n[... {omitted_chars} characters of output omitted ...]\n"


class OutputCollector:
    """Decodes output bytes incrementally and keeps a bounded head and tail of the text.

    Memory stays O(max_chars) however much the script prints. Chunks are also
    forwarded to an optional stream callback until stream_limit characters have
    been forwarded; after that one notice says the stream stopped (the tail still
    arrives in the final output).
    """

    def __init__(self, max_chars: int, stream: Callable[[str], None] | None = None,
                 stream_limit: int = 1_000_000) -> None:
        self.max_chars = max(0, max_chars)
        self.head_limit = self.max_chars // 2
        self.tail_limit = self.max_chars - self.head_limit
        self.total_chars = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._head: list[str] = []
        self._head_len = 0
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self._stream = stream
        self._stream_left = stream_limit

    def add_bytes(self, data: bytes, final: bool = False) -> None:
        """Take a chunk of raw output (final=True flushes a trailing partial character)."""
        self._add_text(self._decoder.decode(data, final))

    def _add_text(self, text: str) -> None:
        if not text:
            return
        self.total_chars += len(text)
        self._forward(text)
        room = self.head_limit - self._head_len
        if room > 0:
            self._head.append(text[:room])
            self._head_len += min(room, len(text))
            text = text[room:]
        if text and self.tail_limit > 0:
            self._tail.append(text)
            self._tail_len += len(text)
            self._trim_tail()

    def _trim_tail(self) -> None:
        while self._tail and self._tail_len - len(self._tail[0]) >= self.tail_limit:
            self._tail_len -= len(self._tail.popleft())

    def _forward(self, text: str) -> None:
        if self._stream is None or self._stream_left <= 0:
            return
        piece = text[:self._stream_left]
        self._stream_left -= len(text)
        self._stream(piece)
        if self._stream_left <= 0:
            self._stream("\n[... live output stops here; the result keeps its head and tail ...]\n")

    def text(self) -> str:
        """The kept output: everything when it fit, else head + cut marker + tail."""
        self.add_bytes(b"", final=True)
        head = "".join(self._head)
        tail = "".join(self._tail)
        if len(tail) > self.tail_limit:
            tail = tail[len(tail) - self.tail_limit:]
        omitted = self.total_chars - len(head) - len(tail)
        if omitted <= 0:
            return head + tail
        return head + cut_marker(omitted) + tail
