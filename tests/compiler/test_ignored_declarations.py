"""E310: a declaration the runtime would ignore is refused at its own line, and each fix the hint
names, applied as printed, checks clean."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mlabc.api import check_paths

ERRORS = Path(__file__).resolve().parent / "errors"


def checked(tmp_path: Path, name: str, text: str):
    shutil.copytree(ERRORS / "files", tmp_path / "files")
    path = tmp_path / name
    path.write_text(text)
    return check_paths([str(path)])


@pytest.mark.parametrize("case, fix", [
    ("E310-split-of-a-folder", ("    split   random 0.2 seed 1\n", "    split   none\n")),
    ("E310-evaluator-beside-a-catalogue-metric",
     ('  evaluator "files/evaluate.py:score" because "our own MAE"\n', "")),
    ("E310-evaluator-beside-a-catalogue-metric",
     ('  metric   mae on "y"\n', '  metric   custom(name = "mae") on "y" lower_is_better\n')),
])
def test_each_e310_hint_fixes_the_file_as_printed(case, fix, tmp_path):
    text = (ERRORS / f"{case}.mlab").read_text()
    (diagnostic,) = checked(tmp_path, "task.mlab", text).diagnostics
    assert diagnostic.code == "E310" and Path(diagnostic.span.path).name == "task.mlab"
    old, new = fix
    assert old in text
    assert (" ".join(new.split()) if new else "remove the `evaluator` line") in diagnostic.hint  # the hint names this fix
    fixed = checked(tmp_path / "fixed", "task.mlab", text.replace(old, new))
    assert fixed.ok, [str(d) for d in fixed.diagnostics]
