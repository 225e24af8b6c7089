"""Text from agents, models, scripts and providers made safe to show or write: `printable` for the
operator's terminal, `utf8_safe` for anything written as UTF-8, `bound_text` for a text cut to a
length (what the agent reads back, a prompt's pieces)."""
from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides and isolates
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: object) -> str:
    """Text for the operator's terminal: every control character but newline and tab is written
    as its escape (ESC as \\x1b, U+202E as \\u202e), so that what an agent or its scripts made
    cannot set a window title, reach the clipboard (OSC 52), clear the screen or reorder a line.
    Every print of such text goes through here; rich shows it as a `rich.text.Text`, never as markup."""
    return _UNPRINTABLE.sub(_escape, str(text))


NOTED: set[str] = set()  # what note_once said (mlab.cli.main empties it for each command)


def note_once(text: str) -> None:
    """Say `text` on stderr (through printable), once in this process: a note about a run folder's
    file that a report or the viewer may read again."""
    if text not in NOTED:
        import sys

        NOTED.add(text)
        print(f"mlab: {printable(text)}", file=sys.stderr)


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def utf8_safe(text: str) -> str:
    """`text` with each lone surrogate written as a backslash escape (U+DCFF as the six characters
    \\udcff), so that it can be written as UTF-8: shown to a model, a terminal or a file."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def bound_text(text: str, max_chars: int | None, what: str = "characters") -> str:
    """`text` cut to about `max_chars`, keeping its head and tail and saying how much was left out."""
    if max_chars is None or max_chars <= 0 or len(text) <= max_chars:
        return text
    head = max_chars * 2 // 3
    tail = max_chars - head
    omitted = len(text) - head - tail
    return (f"{text[:head]}\n\n[... {omitted:,} {what} omitted: showing the first {head:,} and the "
            f"last {tail:,} of {len(text):,} ...]\n\n{text[len(text) - tail:]}")
