"""`mlabc explain CODE`: the long explanation of a diagnostic code, with a wrong and a right example.

The short titles live in codes.py; the explanations and examples in syntax.py (E1xx–E3xx)
checks.py (E4xx–E7xx) task_checks.py (the checks of a task author's mistakes), data_checks.py (the data model's), references.py (reference points) and
gym.py (reward shaping), their type and support files in example.py.
"""
from __future__ import annotations

import textwrap

from ...codes import CODES
from .example import SUPPORT_FILES, Explanation


def explanations() -> dict[str, Explanation]:
    from .checks import EXPLANATIONS as checks
    from .data_checks import EXPLANATIONS as data_checks
    from .gym import EXPLANATIONS as gym
    from .references import EXPLANATIONS as references
    from .syntax import EXPLANATIONS as syntax
    from .task_checks import EXPLANATIONS as task_checks

    return {**syntax, **checks, **task_checks, **data_checks, **references, **gym}


def normalise_code(word: str) -> str:
    """'e302', '302' and 'E302' all name E302."""
    word = word.strip().upper()
    return word if word.startswith("E") else "E" + word


def render(code: str) -> str:
    """The text `mlabc explain CODE` prints."""
    title = CODES[code].title
    found = explanations().get(code)
    lines = [f"{code}: {title}", ""]
    if found is None:
        lines += textwrap.wrap(CODES[code].explanation, 88)
        return "\n".join(lines) + "\n"
    lines += textwrap.wrap(found.text, 88)
    wrong = found.wrong
    if found.encoding != "utf-8":
        wrong = wrong.rstrip("\n") + f"\n# (saved as {found.encoding}, not UTF-8)\n"
    lines += ["", "Wrong:", "", textwrap.indent(wrong.rstrip("\n"), "    "),
              "", "Right:", "", textwrap.indent(found.right.rstrip("\n"), "    ")]
    uses = sorted(name.split("/")[0] + ("/" if "/" in name else "") for name in SUPPORT_FILES
                  if _mentions(found.wrong + found.right, name.split("/")[0]))
    if uses:
        lines += ["", "(The examples sit next to " + ", ".join(uses) + ".)"]
    return "\n".join(lines) + "\n"


def _mentions(text: str, name: str) -> bool:
    return f'"{name}"' in text or f'"{name}/' in text or f'{name}:' in text.replace('"', "")


def listing() -> str:
    """Every code with its title, for `mlabc explain` without a code."""
    return "\n".join(f"{code}  {entry.title}" for code, entry in CODES.items()) + "\n"
