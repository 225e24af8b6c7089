"""Render an agent's compiled templates (StrictUndefined), and find the stable
prefix of its prompt so providers can cache it."""
from __future__ import annotations

import os

import jinja2


class Templates:
    """The templates of one compiled agent (build/agents/<agent>/templates), by name without `.j2`."""

    def __init__(self, texts: dict[str, str]):
        self.env = jinja2.Environment(loader=jinja2.DictLoader({f"{k}.j2": v for k, v in texts.items()}),
                                      undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                                      autoescape=False)

    def render(self, name: str, **context) -> str:
        return self.env.get_template(f"{name}.j2").render(**context)

    def has(self, name: str) -> bool:
        return f"{name}.j2" in self.env.loader.mapping


def stable_prefix(templates: Templates, context: dict) -> str:
    """The part of the prompt that does not change from step to step.

    Rendered three times, with the step-dependent values replaced by two different
    sentinels and by empty values (a first step has no history); what the renderings
    share from the start is stable. A template that shows the step number early
    (before its tools and problem) therefore gets a short prefix: the prefix is
    only as long as the template allows.
    """
    renderings = [templates.render("prompt", **dict(context, **_sentinels(mark, step)))
                  for mark, step in (("\x01" * 3, -1), ("\x02" * 3, -2), ("", -3))]
    prefix = os.path.commonprefix(renderings)
    cut = prefix.rfind("\n")  # end on a line break so the cached block is a whole number of lines
    return prefix[: cut + 1] if cut >= 0 else ""


def _sentinels(text: str, step: int) -> dict:
    return {"history": text, "research_log": text, "retrieved": text, "step": step}
