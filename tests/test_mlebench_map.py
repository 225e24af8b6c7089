"""docs/authoring.md#mle-bench-graders: the map of MLE-bench's 82 competition graders onto the metric
catalogue names only metrics the catalogue has, each competition once, 66 mapped and 16 bespoke."""
from __future__ import annotations

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def section() -> str:
    text = (REPO / "docs" / "authoring.md").read_text()
    start = text.index("#### MLE-bench graders")
    return text[start:text.index("Where the catalogue", start)]


def test_every_mapped_competition_names_a_catalogue_metric():
    catalogue = json.loads((REPO / "spec" / "metrics.json").read_text())["metrics"]
    rows = re.findall(r"^\| ([A-Za-z0-9-]+) \| (.+) \|$", section(), re.M)
    mapped = {name: cell for name, cell in rows if name not in ("competition", "---")}
    assert len(mapped) == len(rows) - 2 == 66
    for name, cell in mapped.items():
        metric = re.search(r"`([a-z0-9_]+)", cell).group(1)
        assert metric in catalogue and catalogue[metric]["kind"] == "tabular", (name, metric)


def test_the_bespoke_graders_complete_the_82():
    text = section()
    bespoke = text[text.index("Bespoke (16):"):]
    names = set(re.findall(r"\b([a-z0-9]+(?:-[a-z0-9]+)+)\b", bespoke))
    mapped = set(re.findall(r"^\| ([A-Za-z0-9-]+) \|", text, re.M)) - {"competition", "---"}
    assert len(names) == 16 and not names & mapped
    assert len(names | mapped) == 82
