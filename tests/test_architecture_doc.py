"""docs/architecture.md's package map matches the tree: every module and subpackage directly in
compiler/mlabc/ and runtime/mlab/ has its row (or its place in the kernel's list), and every name a
row gives is there."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "architecture.md"


def on_disk(package: Path) -> set[str]:
    """The package's modules ("name") and subpackages ("name/"), __init__ aside."""
    found = {p.stem for p in package.glob("*.py") if p.name != "__init__.py"}
    return found | {f"{p.name}/" for p in package.iterdir() if (p / "__init__.py").is_file()}


def in_table(heading: str) -> set[str]:
    """The names the first column of the table under `heading` gives."""
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(heading)
    rows = re.search(r"\n\|.*?(?=\n\n|\Z)", text[start:], re.DOTALL).group(0).strip().splitlines()[2:]
    names = set()
    for row in rows:
        where = row.split(" | ")[0].lstrip("| ")
        for name in re.findall(r"`([^`]+)`", where):
            names.add(name.removesuffix(".py"))
    return names


@pytest.mark.parametrize("heading, package", [("**`mlabc`** (`compiler/mlabc/`)", REPO / "compiler" / "mlabc"),
                                              ("**`mlab`** (`runtime/mlab/`)", REPO / "runtime" / "mlab")])
def test_the_package_map_lists_every_module_and_subpackage_and_nothing_else(heading, package):
    listed, present = in_table(heading), on_disk(package)
    assert sorted(present - listed) == [], f"in {package.relative_to(REPO)} but not in the map of {PAGE.name}"
    assert sorted(listed - present) == [], f"in the map of {PAGE.name} but not in {package.relative_to(REPO)}"
