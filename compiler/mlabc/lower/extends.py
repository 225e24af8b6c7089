"""`extends`, once for every kind that has it: action sets (lower/actions.py), agents (lower/agent.py)
and external agents (lower/external.py).

A declaration is resolved once, its parent first: the parent's result copied (`inherit`), then the
declaration's own entries applied over it (`apply`); one without a parent starts from `empty()`.
A parent that is unknown is reported once, where it is named (E303 for action sets, E304 for
agents, with the closest name); a child of an unknown or broken parent resolves to None and is
not checked further, which would only cascade (`broken`, which action sets override to still
check their own actions). Declarations that extend each other in a cycle are E307.
"""
from __future__ import annotations

from ..values import Reporter, did_you_mean


class ExtendsResolver:
    kind = "declaration"          # in messages: "agent `a` extends unknown agent `b`"
    plural = "declarations"       # "agents extend each other in a cycle"
    unknown_code = "E304"

    def __init__(self, decls: dict, report: Reporter):
        self.decls, self.report = decls, report
        self.resolved: dict[str, object | None] = {}
        self.visiting: list[str] = []

    # -- what each kind says ----------------------------------------------------------------
    def empty(self):
        """The start of a declaration without a parent."""
        raise NotImplementedError

    def inherit(self, decl, parent_result):
        """The parent's result, copied for the child to change."""
        raise NotImplementedError

    def apply(self, decl, base):
        """The declaration's own entries over `base` (changed in place or replaced): its result."""
        raise NotImplementedError

    def broken(self, decl) -> None:
        """A declaration whose parent is unknown or broken: its result is None."""
        return None

    # -- the resolution -----------------------------------------------------------------------
    def resolve(self, name: str):
        if name in self.resolved:
            return self.resolved[name]
        decl = self.decls[name]
        if name in self.visiting:
            cycle = " -> ".join(self.visiting[self.visiting.index(name):] + [name])
            self.report.error("E307", f"{self.plural} extend each other in a cycle: {cycle}", decl.name.span)
            return None
        base = self.empty()
        if decl.parent is not None:
            parent = decl.parent.value
            if parent not in self.decls:
                self.report.error(self.unknown_code, f"{self.kind} `{name}` extends unknown {self.kind} `{parent}`",
                                  decl.parent.span, did_you_mean(parent, [n for n in self.decls if n != name],
                                                                 self.plural))
                base = None
            else:
                self.visiting.append(name)
                inherited = self.resolve(parent)
                self.visiting.pop()
                base = None if inherited is None else self.inherit(decl, inherited)
        result = self.broken(decl) if base is None else self.apply(decl, base)
        self.resolved[name] = result
        return result
