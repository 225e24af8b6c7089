"""E607 covers every branch of a prompt: each field read is checked against the catalogue's shape
of its object, whether a sample context would take the branch or not."""
from __future__ import annotations

import pytest

from mlabc.lower.jinja_analysis import shape_problem
from mlabc.lower.templates import context_shape

CONTEXT = {**context_shape("prompt", "text"), **context_shape("tools", "text"), **context_shape("history", "text")}


@pytest.mark.parametrize("text, line, field", [
    ('{% if task.direction == "x" %}ok{% else %}{{ task.metirc }}{% endif %}', 1, "metirc"),
    ("{% if not task.title %}\n{{ task.titel }}{% endif %}", 2, "titel"),
    ("{% for action in actions %}{% if loop.index > 99 %}{{ action.nmae }}{% endif %}{% endfor %}", 1, "nmae"),
    ("{% for action in [] %}{{ action.x }}{% else %}{{ task['problme'] }}{% endfor %}", 1, "problme"),
    ("{{ task.title }}\n{{ (task.probelm or '') | upper }}", 2, "probelm"),
])
def test_a_misspelled_field_is_found_in_any_branch(text, line, field):
    found = shape_problem(text, CONTEXT)
    assert found is not None and found[:2] == (line, field)
    assert "title" in found[2] or "description" in found[2]


@pytest.mark.parametrize("text", [
    "{% if task.notes is defined %}{{ task.title }}{% endif %}",
    "{% set task = {'anything': 1} %}{{ task.anything }}",
    "{% for task in actions %}{{ task.usage }}{% endfor %}",
    "{% for name, text in steps %}{{ text.whatever }}{% endfor %}",
    "{{ task.title.upper() }} {{ tools }}",
])
def test_what_the_template_binds_or_asks_is_not_a_slip(text):
    assert shape_problem(text, CONTEXT) is None
