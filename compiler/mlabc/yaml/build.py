"""AST declarations → the items of the YAML form (the keys that yaml_decls reads back)."""
from __future__ import annotations

from dataclasses import replace

from .. import ast as A
from ..comments import CommentMap, Note, children
from .write import Commented, ConvertError, Item, Map, Scalar, Seq, value_node

KIND_KEYS = {"task": "tasks", "actions": "actions", "agent": "agents", "experiment": "experiments"}
GROUPED = {A.Data: "data", A.Checksum: "checksum", A.Input: "input", A.Model: "model", A.DropSection: "drop",
           A.Hook: None, A.ExpOverride: "override", A.KnownIssue: "issue",
           A.Reference: "reference"}  # entries gathered under one key (Hook: by its time)


ACTION_SET_KEYS = ("extends", "drop")  # keys of an action set's mapping that are not action names


def yaml_key(entry) -> str:
    """The YAML key an entry is written under (several entries may share it)."""
    if isinstance(entry, A.Hook):
        return entry.time.value
    if isinstance(entry, A.ExpModels):
        return "models"
    if isinstance(entry, A.ExpOverride) and entry.agent:
        return "override_agent"  # `override agent NAME { limits }`: `override_agent: {NAME: {limits: ...}}`
    if type(entry) in GROUPED:
        return GROUPED[type(entry)]
    return {A.BaselineRun: "baseline", A.BaselineValue: "baseline", A.DefaultAgent: "agent",
            A.Source: "from", A.IdColumn: "id", A.Tier: "model", A.UsesActions: "actions",
            A.ExpTasks: "tasks", A.ExpTasksCategory: "tasks", A.ExpAgents: "agents", A.ExpRuns: "runs",
            A.ExpData: "data", A.ExpRetries: "retries"}.get(type(entry), entry.keyword)


def tiered_models(entries: list) -> list:
    """Entries with `models [...]` written as `models main [...]` when the block also has a tiered
    `models`: the YAML form's `models` is a list or a mapping by tier, not both (same IR)."""
    if not any(isinstance(e, A.ExpModels) and e.tier is not None for e in entries):
        return entries
    return [replace(e, tier=A.Ident("main", e.span)) if isinstance(e, A.ExpModels) and e.tier is None else e
            for e in entries]


def yaml_order(units: list) -> list:
    """Units with those that share a YAML key moved up to the first of them (the YAML order)."""
    first: dict[str, int] = {}
    keyed = []
    for position, unit in enumerate(units):
        key = yaml_key(unit) if isinstance(unit, A.Entry) else KIND_KEYS.get(getattr(unit, "kind", ""), "")
        first.setdefault(key, position)
        keyed.append((first[key], position, unit))
    return [unit for _, _, unit in sorted(keyed, key=lambda t: (t[0], t[1]))]


SCORING = (A.Submission, A.Metric, A.BaselineRun, A.BaselineValue, A.Success, A.Evaluator, A.Leaderboard)
AGENT_PARTS = (A.Does, A.Respond, A.Search, A.Prompts)

class YamlBuilder(Commented):
    """Builds the document items of one module."""

    def __init__(self, cmap: CommentMap):
        super().__init__(cmap)
        self.hoisted: int | None = None

    def item(self, key, value, unit=None) -> Item:
        made = super().item(key, value, unit)
        if unit is not None and id(unit) == self.hoisted:
            made.leading = []
        return made

    # -- the document ---------------------------------------------------------
    def document(self, module: A.Module) -> tuple[list[Item], list[Note]]:
        """The top-level items, and the comments that open the file."""
        units = children(module)
        self.blank_after_header = bool(units) and self.cmap.blank_before(units[0])
        header = list(self.cmap.of(units[0]).leading) if units else []
        self.hoisted = id(units[0]) if units else None
        items: list[Item] = []
        if module.uses:
            uses = [self.item(None, Map([Item("std", Scalar(u.target.value))]
                                        + ([Item("version", Scalar(str(u.version.value)))] if u.version else []))
                              if u.std else value_node(u.target, "str"), u) for u in module.uses]
            items.append(Item("use", Seq(uses)))
        groups: dict[str, Item] = {}
        for decl in yaml_order(list(module.decls)):
            key = KIND_KEYS[decl.kind]
            if key not in groups:
                groups[key] = Item(key, Map([]))
                items.append(groups[key])
            groups[key].value.items.append(self.item(decl.name.value, self.decl_body(decl), decl))
        closing = self.cmap.of(module).closing
        if closing and items:
            items[-1].closing += closing
        elif closing:
            header += closing
        return items, header

    def decl_body(self, decl: A.Decl) -> Map:
        if isinstance(decl, A.Actions):
            return self._action_set(decl)
        body = self.block(decl.entries)
        if isinstance(decl, A.Agent) and decl.parent is not None:
            body.items.insert(0, Item("extends", Scalar(decl.parent.value)))
        if isinstance(decl, A.ExternalAgent):  # `agent NAME external { ... }`: `external: true` first
            body.items.insert(0, Item("external", Scalar("true")))
        return body

    def _action_set(self, decl: A.Actions) -> Map:
        """Actions by name; `extends` and `drop` (the inherited actions removed) are keys of their own."""
        items: list[Item] = []
        if decl.parent is not None:
            items.append(Item("extends", Scalar(decl.parent.value)))
        drops = [e for e in decl.entries if isinstance(e, A.DropAction)]
        if drops:
            items.append(Item("drop", Seq([self.item(None, value_node(e.name, "str"), e) for e in drops])))
        for action in decl.entries:
            if isinstance(action, A.DropAction):
                continue
            if not isinstance(action.name, A.Str):
                raise ConvertError(f"line {action.span.line}: an action name must be a string")
            if action.name.value in ACTION_SET_KEYS:
                raise ConvertError(f"line {action.span.line}: an action named {action.name.value!r} has no YAML "
                                   "form: the key is taken by the action set's own entry")
            items.append(self.item(action.name.value, self.block(action.entries), action))
        return Map(items, block=True)

    def block(self, entries) -> Map:
        """A block's entries as mapping items; repeated entries gathered, one key each."""
        items: list[Item] = []
        groups: dict[str, Item] = {}
        for entry in yaml_order(tiered_models(list(entries))):
            key = yaml_key(entry)
            if type(entry) in GROUPED or (isinstance(entry, A.ExpModels) and entry.tier is not None):
                sub_key, value = self.grouped(entry)
                if key not in groups and any(i.key == key for i in items):
                    raise ConvertError(f"line {entry.span.line}: `models` with and without a tier cannot be mixed "
                                       "in the YAML form; give every `models` entry a tier")
                if key not in groups:
                    groups[key] = Item(key, Seq([]) if sub_key is None else Map([]))
                    groups[key].blank_before = self.cmap.blank_before(entry) and not self.cmap.of(entry).leading
                    items.append(groups[key])
                container = groups[key].value
                if (sub_key is None) != isinstance(container, Seq):
                    raise ConvertError(f"line {entry.span.line}: `models` with and without a tier cannot be mixed "
                                       "in the YAML form; give every `models` entry a tier")
                container.items.append(self.item(sub_key, value, entry))
                continue
            if key in groups or any(i.key == key for i in items):
                raise ConvertError(f"line {entry.span.line}: `{key}` is given twice in one block; the YAML form "
                                   "has one key each (run `mlabc check` and keep one)")
            items.append(self.item(key, self.single(entry), entry))
        return Map(items, block=True)

    # -- entries --------------------------------------------------------------
    def grouped(self, e) -> tuple[str | None, object]:
        if isinstance(e, A.Data):
            return e.name.value, self.block(e.entries)
        if isinstance(e, A.Checksum):
            if not isinstance(e.file, A.Str):
                raise ConvertError(f"line {e.span.line}: a checksum's file must be a string")
            return e.file.value, value_node(e.digest, "str")
        if isinstance(e, A.Input):
            parts = [Item("type", Scalar(e.type.value))]
            if e.default is not None:
                parts.append(Item("default", value_node(e.default, "auto")))
            return e.name.value, Map(parts + [Item("describe", value_node(e.description, "str"))])
        if isinstance(e, A.Model):
            if not e.params:
                return e.tier.value, value_node(e.default, "str")
            params = [self.item(p.key.value, value_node(p.value, "auto"), p) for p in e.params]
            return e.tier.value, Map([Item("default", value_node(e.default, "str"))] + params)
        if isinstance(e, A.DropSection):
            return None, value_node(e.name, "str")
        if isinstance(e, A.Hook):
            return None, Scalar(e.name.value)
        if isinstance(e, A.ExpOverride):
            return e.name.value, self.block(e.entries)
        if isinstance(e, A.ExpModels):
            return e.tier.value, value_node(e.value, "str")
        if isinstance(e, A.KnownIssue):
            parts = [Item("text", value_node(e.text, "str")), Item("since", value_node(e.since, "auto"))]
            return None, Map(parts + ([Item("fixed", value_node(e.fixed, "auto"))] if e.fixed is not None else []))
        if isinstance(e, A.Reference):
            parts = [Item("value", value_node(e.value, "auto"))]
            return e.label.value, Map(parts + ([Item("source", value_node(e.source, "str"))] if e.source else []))
        raise ConvertError(f"unexpected {type(e).__name__}")

    def _kv(self, items, need=False) -> Map:
        out = []
        for item in items:
            value = value_node(item.value, "auto")
            if need and item.need is not None:
                value = Map([Item("value", value), Item("need", Scalar(item.need.value))])
            out.append(self.item(item.key.value, value, item))
        return Map(out)

    def single(self, e):
        v = value_node
        simple = {A.Title: "str", A.Category: "name", A.Problem: "str", A.Starter: "str", A.ReadOnly: "str",
                  A.Requires: "str", A.Demo: "str", A.IdColumn: "str", A.Public: "str",
                  A.Private: "str", A.Prepare: "str", A.Validation: "auto", A.Describe: "str", A.Returns: "str", A.Tool: "str", A.Show: "str", A.Hide: "str",
                  A.History: "auto", A.Summarize: "auto", A.Retries: "auto", A.Prompt: "str",
                  A.FormatError: "str", A.ExpTasks: "name", A.ExpAgents: "name", A.ExpRuns: "auto",
                  A.ExpData: "name", A.ExpRetries: "auto", A.ExpModels: "str",
                  A.Command: "str", A.Submits: "str", A.NoDeps: "str", A.Dialect: "name"}
        if type(e) in simple:
            return v(e.value, simple[type(e)])
        if isinstance(e, A.Answers):
            if e.unlabelled is None:
                return v(e.value, "str")
            return Map([Item("columns", v(e.value, "str")), Item("unlabelled", Scalar("true"))])
        if isinstance(e, (A.DefaultAgent, A.UsesActions, A.Tier)):
            return Scalar(e.name.value)
        if isinstance(e, SCORING):
            return self._scoring(e)
        if isinstance(e, AGENT_PARTS):
            return self._agent_part(e)
        if isinstance(e, A.Version):
            return v(e.value, "auto")
        if isinstance(e, A.Changes):
            return Seq([self.item(None, Map([Item("version", v(c.version, "auto")), Item("what", v(c.what, "str")),
                                             Item("because", v(c.why, "str"))]), c) for c in e.items])
        if isinstance(e, A.Gym):  # the shaping is a name
            return Map([self.item(i.key.value, value_node(i.value, "name" if i.key.value == "shaping" else "auto"), i)
                        for i in e.items])
        if isinstance(e, (A.Limits, A.Env, A.Thresholds)):
            return self._kv(e.items)
        if isinstance(e, A.Hardware):
            return self._kv(e.items, need=True)
        if isinstance(e, A.Source):
            return Map([Item(e.kind_.value, v(e.value, "name"))])
        if isinstance(e, A.Split):
            return self._split(e)
        if isinstance(e, A.ExpTasksCategory):
            return Map([Item("category", Scalar(e.name.value))])
        raise ConvertError(f"line {e.span.line}: `{e.keyword}` has no YAML form")

    def _scoring(self, e):
        """A task's submission, metric, baseline, success threshold, evaluator or leaderboard."""
        v = value_node
        if isinstance(e, A.Submission):
            if e.columns is None and not e.rules:
                return v(e.file, "str")
            parts = [Item("file", v(e.file, "str"))] + ([Item("columns", v(e.columns, "str"))] if e.columns else [])
            if e.rules:
                parts.append(Item("column", Map([self.item(self.column_name(rule), self.column_rule(rule), rule)
                                                 for rule in e.rules])))
            return Map(parts)
        if isinstance(e, A.Metric):
            if e.on is None and e.direction is None and not e.params:
                return Scalar(e.name.value)
            parts = [Item("name", Scalar(e.name.value))]
            if e.params:
                parts.append(Item("params", Map([self.item(p.name.value, v(p.value, "auto"), p) for p in e.params])))
            if e.on is not None:
                parts.append(Item("on", v(e.on, "str")))
            if e.direction is not None:
                parts.append(Item("direction", Scalar(e.direction.value)))
            return Map(parts)
        if isinstance(e, A.BaselineRun):
            return Map([Item("run", v(e.script, "str"))])
        if isinstance(e, A.BaselineValue):
            return Map([Item("value", v(e.value, "auto")), Item("because", v(e.reason, "str"))])
        if isinstance(e, A.Success):
            return Map([Item("improvement", v(e.threshold, "auto"))])
        if isinstance(e, A.Evaluator):
            return Map([Item("function", v(e.target, "str")), Item("because", v(e.reason, "str"))])
        if isinstance(e, A.Leaderboard):
            return Map([Item("file", v(e.file, "str"))] + [Item(name, v(part, "str")) for name, part in
                                                           (("column", e.column), ("source", e.source)) if part])

    def _agent_part(self, e):
        """An action's primitive, an agent's reply format, search or prompts."""
        v = value_node
        if isinstance(e, A.Does):
            if not e.params:
                return Scalar(e.primitive.value)
            params = [self.item(p.name.value, v(p.value, "auto"), p) for p in e.params]
            return Map([Item(e.primitive.value, Map(params))])
        if isinstance(e, A.Respond):
            sections = Map([self._section(s, e.format.value) for s in e.sections])
            if e.format.value != "tools":
                if e.settings:
                    raise ConvertError(f"line {e.settings[0].span.line}: `respond {e.format.value}` takes no "
                                       "settings; fix what `mlabc check` reports about it first")
                return Map([Item(e.format.value, sections)])
            parts = [Item("sections", sections)] if e.sections else []
            parts += [self.item(item.key.value, v(item.value, "name"), item) for item in e.settings]
            return Map([Item("tools", Map(parts))])
        if isinstance(e, A.Search):
            params = [self.item(i.key.value, v(i.value, "name" if isinstance(i.value, A.Name) else "auto"), i)
                      for i in e.items]
            return Map([Item(e.policy.value, Map(params))])
        if isinstance(e, A.Prompts):
            return Map([self.item(p.name.value, v(p.value, "str"), p) for p in e.items])

    @staticmethod
    def column_name(rule: A.ColumnRule) -> str:
        if not isinstance(rule.column, A.Str):
            raise ConvertError(f"line {rule.span.line}: a constrained column's name must be a string")
        return rule.column.value

    @staticmethod
    def column_rule(rule: A.ColumnRule):
        """A column constraint: its kind alone, or a mapping of the .mlab words (kind, max/exactly, from, to)."""
        if rule.count is None and rule.low is None:
            return Scalar(rule.kind_.value)
        parts = [Item("kind", Scalar(rule.kind_.value))]
        if rule.count is not None:
            parts.append(Item(rule.count.value, value_node(rule.count_value, "auto")))
        if rule.low is not None:
            parts.append(Item("from", value_node(rule.low, "str")))
        if rule.high is not None:
            parts.append(Item("to", value_node(rule.high, "auto")))
        return Map(parts)

    def _split(self, e: A.Split):
        if not e.args and e.seed is None:
            return Scalar(e.method.value)
        if e.method.value == "time" and len(e.args) >= 3 and isinstance(e.args[1], A.Name) and e.args[1].value == "last":
            horizon = " ".join(str(getattr(a, "text", None) or a.value) for a in e.args[2:])
            return Map([Item("method", Scalar("time")), Item("column", value_node(e.args[0], "str")),
                        Item("last", Scalar(horizon))])
        names = {"random": ("fraction",), "group": ("column", "fraction"), "stratified": ("column", "fraction"),
                 "time": ("column", "fraction"),
                 "ordered": ("fraction",)}
        expected = names.get(e.method.value, ())
        if len(e.args) != len(expected) or (expected[:1] == ("column",) and not isinstance(e.args[0], A.Str)):
            raise ConvertError(f"line {e.span.line}: this `split` has no YAML form; "
                               "fix what `mlabc check` reports about it first")
        parts = [Item("method", Scalar(e.method.value))]
        parts += [Item(name, value_node(arg, "str" if name == "column" else "auto"))
                  for name, arg in zip(expected, e.args)]
        if e.seed is not None:
            parts.append(Item("seed", value_node(e.seed, "auto")))
        return Map(parts)

    def _section(self, s: A.Section, fmt: str) -> Item:
        if not isinstance(s.name, A.Str):
            raise ConvertError(f"line {s.span.line}: a {s.word} name must be a string")
        if s.word != ("field" if fmt == "json" else "section"):
            raise ConvertError(f"line {s.span.line}: `respond {fmt}` holds "
                               f"`{'field' if fmt == 'json' else 'section'}` entries, not `{s.word}`")
        if s.role is None and s.kind is None:
            return self.item(s.name.value, value_node(s.instruction, "str"), s)
        parts = []
        if s.role is not None:
            parts.append(Item("role", Scalar(s.role.value)))
        if s.kind is not None:
            parts.append(Item("kind", Scalar(s.kind.value)))
        return self.item(s.name.value, Map(parts + [Item("instruction", value_node(s.instruction, "str"))]), s)
