"""The folded model-call details of a run page, written once as data and shown when opened.

A step's prompt is mostly what the step before it was sent: the same system text, problem and
tool list, and a history that gains one step and loses its oldest. Written into every step's
model-call details, the prompts were most of a long run's page (84 MiB of 10,000 steps), and
the calls' tables a tenth of what the browser had to build. Here each prompt is cut at its blank
lines into paragraphs; each distinct paragraph is stored once, and a prompt is the list of its
paragraphs' numbers. A new paragraph that is a few lines put in front of a known one (the
history's heading above what is now its oldest step) is stored as those lines and the known
paragraph, whose number is written negated (`~n`: joined by one line break, not a blank line).
Identical prompts share one entry, and so do identical lists of calls.

The table goes into the page as one JSON document in a `<script type="application/json">`
element (never run, so the browser only scans it): `pieces`, `prompts` (lists of piece
numbers), `calls` (lists of rows of the calls' table, each cell a shown text). The page's
script parses it the first time a step's model-call details are opened and builds their
contents: the calls' table and the prompt, whole.
"""
from __future__ import annotations

import json

from mlab.text import utf8_safe

SEPARATOR = "\n\n"       # a prompt is its paragraphs joined by this (str.split and join are exact inverses)
ELEMENT_ID = "folds"     # the id of the script element holding the table
HEADING_LINES = 3        # the lines in front of a known paragraph that are looked for
CALL_COLUMNS = ("tier", "model", "purpose", "prompt tokens", "completion tokens", "latency (s)")
NUMERIC_FROM = 3         # the columns from this one on are numbers (aligned right)


class FoldTable:
    """Distinct prompts, their distinct paragraphs and distinct call lists, in the order first seen."""

    def __init__(self) -> None:
        self._pieces: dict[str, int] = {}
        self._prompts: dict[str, int] = {}
        self._lists: list[list[int]] = []
        self._calls: dict[str, int] = {}
        self._rows: list[list[list[str]]] = []

    def __len__(self) -> int:
        return len(self._lists)

    def add(self, text: str) -> int:
        """The number of prompt `text` in the table (the number it had when it was added before)."""
        text = utf8_safe(text)  # a lone surrogate is shown as its escape, as elsewhere on the page
        known = self._prompts.get(text)
        if known is not None:
            return known
        numbers: list[int] = []
        for paragraph in text.split(SEPARATOR):
            numbers += self._paragraph(paragraph)
        self._lists.append(numbers)
        self._prompts[text] = len(self._lists) - 1
        return len(self._lists) - 1

    def add_calls(self, rows: list[list[str]]) -> int:
        """The number of this list of the calls' table rows (one text per column of CALL_COLUMNS)."""
        rows = [[utf8_safe(cell) for cell in row] for row in rows]
        key = json.dumps(rows, ensure_ascii=False)
        known = self._calls.get(key)
        if known is None:
            known = self._calls[key] = len(self._rows)
            self._rows.append(rows)
        return known

    def _paragraph(self, paragraph: str) -> list[int]:
        pieces = self._pieces
        known = pieces.get(paragraph)
        if known is not None:
            return [known]
        cut = -1
        for _ in range(HEADING_LINES):
            cut = paragraph.find("\n", cut + 1)
            if cut < 0:
                break
            tail = pieces.get(paragraph[cut + 1:])
            if tail is not None:
                return [pieces.setdefault(paragraph[:cut], len(pieces)), ~tail]
        return [pieces.setdefault(paragraph, len(pieces))]

    def text(self, number: int) -> str:
        """Prompt `number` rebuilt from its pieces, as the page's script rebuilds it."""
        pieces = list(self._pieces)
        parts = []
        for index, piece in enumerate(self._lists[number]):
            if index:
                parts.append("\n" if piece < 0 else SEPARATOR)
            parts.append(pieces[~piece if piece < 0 else piece])
        return "".join(parts)

    def document(self) -> dict:
        return {"separator": SEPARATOR, "columns": list(CALL_COLUMNS), "numeric_from": NUMERIC_FROM,
                "pieces": list(self._pieces), "prompts": self._lists, "calls": self._rows}

    def script(self) -> str:
        """The table as a data block of the page ('' when it is empty). No `<` is left in it, so
        no text in a prompt can close the element."""
        if not self._lists and not self._rows:
            return ""
        data = json.dumps(self.document(), ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
        return f"<script type='application/json' id='{ELEMENT_ID}'>{data}</script>"
