"""The names mlab makes and matches, one rule each for the compiler and the runtime: `snake_case`
(an action's default tool name) and `closest` (the known name closest to a mistyped one, behind the
compiler's "did you mean" hints and the runtime's)."""
from __future__ import annotations

import re


def snake_case(name: str) -> str:
    """The default tool name of an action: `List Files` -> list_files, `Edit Script (AI)` -> edit_script_ai."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def closest(word: str, choices) -> str | None:
    """The choice closest to a mistyped word (difflib, cutoff 0.6), or None: the one rule of a
    suggestion, for the compiler (mlabc.values.did_you_mean) and the runtime (mlab.errors.closest_hint)."""
    import difflib  # here: only a mistake needs it

    found = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return found[0] if found else None
