"""`mlabc schema metrics|primitives` print the catalogues, and docs/authoring.md lists every metric
and primitive exactly as the catalogues have them."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mlabc.authoring.catalogues import catalogue_markdown

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "spec"


def _doc_table(first_header: str) -> str:
    """The Markdown table of docs/authoring.md whose first header is `first_header`."""
    text = (REPO / "docs" / "authoring.md").read_text(encoding="utf-8")
    found = re.search(rf"^\| {first_header} \|.*?(?=\n\n|\Z)", text, re.S | re.M)
    assert found, f"docs/authoring.md has no table starting with | {first_header} |"
    return found.group(0)


@pytest.mark.parametrize("subject, header", [("metrics", "metric"), ("primitives", "primitive")])
def test_the_docs_tables_are_the_catalogues(subject, header):
    assert _doc_table(header) == catalogue_markdown(subject), (
        f"update docs/authoring.md from: python -c \"from mlabc.authoring.catalogues import "
        f"catalogue_markdown; print(catalogue_markdown('{subject}'))\"")


@pytest.mark.parametrize("subject", ["metrics", "primitives"])
def test_every_entry_of_the_catalogue_has_a_row(subject):
    names = json.loads((SPEC / f"{subject}.json").read_text(encoding="utf-8"))[subject]
    rows = [line.split(" | ")[0].strip("| `") for line in catalogue_markdown(subject).splitlines()[2:]]
    assert rows == list(names)


def test_mlabc_schema_prints_the_metrics(mlabc):
    code, out, _ = mlabc("schema", "metrics")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["metric", "direction", "columns", "kind"]
    f1 = next(line for line in lines if line.startswith("f1 "))
    assert 'average = "binary" (binary / micro / macro / weighted)' in f1 and "higher_is_better" in f1
    code, out, _ = mlabc("schema", "metrics", "--json")
    assert code == 0 and json.loads(out) == json.loads((SPEC / "metrics.json").read_text(encoding="utf-8"))


def test_mlabc_schema_prints_the_primitives(mlabc):
    code, out, _ = mlabc("schema", "primitives")
    assert code == 0
    understand = next(line for line in out.splitlines() if line.startswith("understand_file "))
    assert "things_to_look_for: text" in understand and "chunk_chars = 10000" in understand
    assert understand.rstrip().endswith("yes")
    code, out, _ = mlabc("schema", "primitives", "--json")
    assert code == 0 and json.loads(out) == json.loads((SPEC / "primitives.json").read_text(encoding="utf-8"))


def test_an_unknown_subject_names_the_catalogues(mlabc):
    code, _, err = mlabc("schema", "metric")
    assert code == 2 and "metrics, primitives" in err
