"""An agent's show and hide lists checked against its action set, with what it inherits told
apart from what it declares.

An agent that extends another and names an action set of its own (a community agent extending
a standard one) inherits the parent's `show` list; when the parent later shows an action the
new set lacks, the mistake is the child's, so it is reported at the child's `actions` line,
naming the inherited action and the fix, never inside the parent's file."""
from __future__ import annotations

from pathlib import Path

from .. import ast as A
from ..values import Reporter, did_you_mean


def declares(decl: A.Decl, node) -> bool:
    """Was `node` written inside `decl` (not inherited from a parent)?"""
    span, own = node.span, decl.span
    return span.path == own.path and own.line <= span.line <= (own.end_line or span.line)


def replaces_action_set(decl: A.Agent) -> bool:
    return decl.parent is not None and any(isinstance(e, A.UsesActions) for e in decl.entries)


def as_pinned(decl: A.Agent, base: dict, pinned: dict[str, tuple[str, set[str]]]) -> dict:
    """A parent's settings as the release the child's file pins had them: the `show` items that the
    standard library's agents came to show since are not inherited (pinned: file -> (std folder,
    those actions))."""
    folder, dropped = pinned.get(decl.span.path, ("", set()))
    if not dropped:
        return base

    def kept(items):
        return [(item, node) for item, node in items
                if not (item in dropped and str(Path(node.span.path).resolve().parent) == folder)]

    if base["show"] is not None:
        base["show"] = kept(base["show"])
    base["unhide"] = kept(base["unhide"])
    base["pinned_away"] = sorted(dropped)  # hiding one of them hides nothing, and is no mistake
    return base


def check_shown(decl: A.Agent, settings: dict, set_ref: A.Ident, names: list[str], report: Reporter) -> None:
    """E306 for a `show`/`hide` item of the agent's own that its action set lacks; one E309 (at the
    agent's `actions` line) for the inherited `show` items that the action set it chose lacks and
    that it does not `hide`. Hiding such an inherited action is how the agent says it does without
    it; an inherited `hide` of an action the new set lacks hides nothing and is dropped."""
    replaced = replaces_action_set(decl) and declares(decl, set_ref)
    shows = (settings["show"] or []) + settings["unhide"]
    inherited = [(item, value) for item, value in shows
                 if replaced and item not in names and not declares(decl, value)]
    own_hides = {item for item, value in settings["hide"] if declares(decl, value)}
    for label, items in (("show", shows), ("hide", settings["hide"])):
        for item, value in items:
            if item in names or (replaced and not declares(decl, value)):
                continue
            if label == "hide" and (any(item == name for name, _ in inherited)
                                    or item in settings.get("pinned_away", ())):
                continue  # hides an inherited action the set lacks (the fix E309 suggests), or one the
                          # standard agents came to show after the release the file pins
            report.error("E306", f"`{label}` names {item!r}, which is not an action of `{set_ref.value}`",
                         value.span, did_you_mean(item, names, "actions"))
    inherited = [(item, value) for item, value in inherited if item not in own_hides]
    if inherited:
        missing = ", ".join(repr(item) for item, _ in inherited)
        listed = ", ".join(f'"{item}"' for item, _ in inherited)
        origin = _where(inherited[0][1].span)
        report.error("E309", f"agent `{decl.name.value}` inherits a `show` list ({origin}) naming "
                     f"{'an action' if len(inherited) == 1 else f'{len(inherited)} actions'} that its action set "
                     f"`{set_ref.value}` does not have: {missing}", set_ref.span,
                     hint=f"add `hide [{listed}]` to agent `{decl.name.value}` to do without "
                          f"{'it' if len(inherited) == 1 else 'them'}, or add "
                          f"{'it' if len(inherited) == 1 else 'them'} to `{set_ref.value}`")


def _where(span) -> str:
    """Where an inherited list was written: a standard-library file by its `use std` name."""
    path = span.path.replace("\\", "/")
    if "/tasks/std/" in path or path.startswith("tasks/std/"):
        return f'std "{path.rsplit("/", 1)[-1].removesuffix(".mlab")}" line {span.line}'
    return f"{path}:{span.line}"
