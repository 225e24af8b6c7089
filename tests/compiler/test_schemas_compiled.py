"""The compiled checks of result.json and run.json (fastjsonschema, mlabc.schemas._COMPILED) pass
and refuse exactly what jsonschema does: a report takes their word for every run it reads."""
from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from mlabc import schemas

GOLDEN = Path(__file__).resolve().parents[1] / "reports" / "data" / "golden-runs" / "template"
ODD_VALUES = [None, "x", "", -1, 0, 1.5, float("inf"), True, [], [1], {}, {"x": 1}]


def _paths(value, at=()):
    """Every path into a JSON value (keys and indexes), the value's own first."""
    yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*at, index))


def _with(document, path, value):
    changed = copy.deepcopy(document)
    if not path:
        return value
    holder = changed
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = value
    return changed


@pytest.mark.parametrize("name, file", [("result", "result.json"), ("run", "run.json")])
def test_the_compiled_check_agrees_with_jsonschema_at_every_place_of_a_real_document(name, file):
    document = json.loads((GOLDEN / file).read_text())
    assert schemas._compiled(name) is not None, f"{name} is checked by the compiled check"
    assert schemas.problems(name, document) == []
    slow = schemas.validator(name)
    rng = random.Random(7)
    refused = 0
    for path in _paths(document):
        for value in rng.sample(ODD_VALUES, 4):
            changed = _with(document, path, value)
            expected = [f"at {'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
                        for e in sorted(slow.iter_errors(changed), key=lambda e: list(map(str, e.absolute_path)))]
            assert schemas.problems(name, changed) == expected, (path, value)
            refused += bool(expected)
    assert refused > 50, "the changes tried include many a schema refuses"


def test_a_schema_with_a_keyword_newer_than_draft_7_is_left_to_jsonschema(monkeypatch):
    monkeypatch.setattr(schemas, "_COMPILED", schemas._COMPILED | {"trace"})
    schemas._compiled.cache_clear()
    try:
        assert schemas._compiled("trace") is None   # spec/trace.schema.json has prefixItems
    finally:
        schemas._compiled.cache_clear()
