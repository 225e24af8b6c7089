"""docs/authoring.md lists every check with its code: the table of its "The checks of a task"
section holds exactly the codes of mlabc.codes, with their titles."""
from __future__ import annotations

import re
from pathlib import Path

from mlabc.codes import CODES

DOC = Path(__file__).resolve().parents[2] / "docs" / "authoring.md"


def test_every_code_is_listed_with_its_title():
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## The checks of a task", 1)[1].split("\n## ", 1)[0]
    listed = dict(re.findall(r"^\| `(E\d{3})` \| ([^:|]+):", section, re.MULTILINE))
    assert list(listed) == list(CODES)
    assert listed == {code: entry.title for code, entry in CODES.items()}
