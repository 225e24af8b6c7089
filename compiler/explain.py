"""`mlabc explain CODE`: the long explanation of a diagnostic code, with a wrong and a right example.

The short titles live in codes.py; the explanations and examples in explain_syntax.py
(E1xx–E3xx) and explain_checks.py (E4xx–E7xx). Examples are whole files that may use the
small files of SUPPORT_FILES and the standard library; `check_example` runs one.
"""
from __future__ import annotations

import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

from .codes import CODES

EXAMPLE_NAME = "example.mlab"

# Files next to every example: a starter folder, a data table, a demo, Python escape hatches.
SUPPORT_FILES = {
    "env/train.py": "import pandas as pd\n\nprint(len(pd.read_csv('train.csv')))\n",
    "data.csv": "id,x,y\n" + "".join(f"{i},{i / 10:.1f},{2 * i / 10 + 0.1:.1f}\n" for i in range(1, 11)),
    "demo.json": '["Action: Final Answer\\nAction Input: {\\"final_answer\\": \\"done\\"}"]\n',
    "evaluate.py": "def score(submission_dir, answers_dir):\n    return 0.0\n",
    "broken.py": "def score(submission_dir, answers_dir)\n    return 0.0\n",
    "shared.mlab": '# Declarations several files share.\nuse std "agents"\n',
}


@dataclass(frozen=True)
class Explanation:
    """What a code means and how to fix it; `wrong` gives the code, `right` checks clean."""

    text: str
    wrong: str
    right: str
    encoding: str = "utf-8"  # how `wrong` is saved (E106 needs a file that is not UTF-8)


def explanations() -> dict[str, Explanation]:
    from .explain_checks import EXPLANATIONS as checks
    from .explain_syntax import EXPLANATIONS as syntax

    return {**syntax, **checks}


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


def check_example(text: str, encoding: str = "utf-8"):
    """Check an example file next to SUPPORT_FILES in a fresh folder; returns the Compiled result."""
    from .api import check_paths

    with tempfile.TemporaryDirectory(prefix="mlabc-explain-") as folder:
        root = Path(folder)
        for name, content in SUPPORT_FILES.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(content, encoding="utf-8")
        example = root / EXAMPLE_NAME
        example.write_bytes(text.encode(encoding))
        return check_paths([str(example)])
