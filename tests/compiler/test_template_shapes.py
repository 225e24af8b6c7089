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


def _every_template() -> list[tuple[str, str]]:
    from mlabc.resources import spec_json

    spec = spec_json("template-context.json")
    kinds = {"templates": "text", "tools_agent_templates": "tools", "search_agent_templates": "search",
             "external_agent_templates": "external"}
    return [(template, kind) for section, kind in kinds.items() for template, context in spec[section].items()
            if isinstance(context, dict)]


@pytest.mark.parametrize("template, kind", _every_template())
def test_each_catalogued_object_names_fields_a_template_can_read(template, kind):
    # a description whose field list does not parse reads as one odd field, and every real read
    # of that object (say section.name in a tools agent's reply format) would be refused as a slip
    from mlabc.lower.jinja_analysis import shape_of

    context = context_shape(template, kind)
    for name, description in context.items():
        shape = shape_of(description)
        if shape is not None:
            assert all(field.isidentifier() for field in shape[1]), (name, shape)
            read = (f"{{% for item in {name} %}}{{{{ item.{shape[1][0]} }}}}{{% endfor %}}" if shape[0] == "list"
                    else f"{{{{ {name}.{shape[1][0]} }}}}")
            assert shape_problem(read, context) is None, (name, read)
