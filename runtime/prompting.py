"""Render an agent's compiled templates (StrictUndefined), and find the stable
prefix of its prompt so providers can cache it."""
from __future__ import annotations

from pathlib import Path

import jinja2


class Templates:
    """The templates of one compiled agent (build/agents/<agent>/templates)."""

    def __init__(self, folder: Path):
        self.env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)),
                                      undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                                      autoescape=False)

    def render(self, name: str, **context) -> str:
        return self.env.get_template(f"{name}.j2").render(**context)

    def has(self, name: str) -> bool:
        try:
            self.env.get_template(f"{name}.j2")
            return True
        except jinja2.TemplateNotFound:
            return False


DYNAMIC_KEYS = ("history", "research_log", "retrieved", "step")


def stable_prefix(templates: Templates, context: dict) -> str:
    """The part of the prompt that does not change from step to step.

    Rendered twice, with the step-dependent values replaced by two different
    sentinels; what both renderings share from the start is stable.
    """
    first = templates.render("prompt", **dict(context, **_sentinels("\x01")))
    second = templates.render("prompt", **dict(context, **_sentinels("\x02")))
    length = 0
    for a, b in zip(first, second):
        if a != b:
            break
        length += 1
    prefix = first[:length]
    cut = prefix.rfind("\n")  # end on a line break so the cached block is a whole number of lines
    return prefix[: cut + 1] if cut >= 0 else ""


def _sentinels(mark: str) -> dict:
    return {"history": mark * 3, "research_log": mark * 3, "retrieved": mark * 3, "step": -1 if mark == "\x01" else -2}
