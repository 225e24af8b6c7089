"""The declarations of the YAML form: which keys each block takes and the AST entry each makes.

The keys are the .mlab keywords; a block the .mlab form repeats by name (data variants,
inputs, models, sections, overrides) is a mapping by that name. yaml_schema.py describes
the same shape as a JSON Schema; a test keeps the two in step.
"""
from __future__ import annotations

from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .. import ast as A
from ..values import did_you_mean
from .agents import agent_handlers, experiment_handlers, external_handlers, is_external
from .fields import ident_entry, key_values, limits_entry, one_value, parts_of
from .reader import TOP_KEYS, YamlReader, node_tag


def read_module(r: YamlReader, root: Node | None) -> A.Module:
    uses: list[A.Use] = []
    decls: list[A.Decl] = []
    if root is None:
        return A.Module(r.path, (), ())
    if not isinstance(root, MappingNode):
        r.error("E401", f"a .mlab.yaml file holds a mapping with the keys {', '.join(TOP_KEYS)}, "
                        f"not {r.describe(root)}", root)
        return A.Module(r.path, (), ())
    for name, key, value in r.mapping(root, "the file"):
        if name not in TOP_KEYS:
            r.error("E110", f"`{name}` does not start a declaration", key, did_you_mean(name, TOP_KEYS, "top-level keys"))
        elif r.present(key, value, "the file"):
            if name == "use":
                uses += _uses(r, value)
            else:
                decls += _declarations(r, name, value)
    return A.Module(r.path, tuple(uses), tuple(decls))


def _uses(r: YamlReader, node: Node) -> list[A.Use]:
    items = node.value if isinstance(node, SequenceNode) else [node]
    out = []
    for item in items:
        if isinstance(item, ScalarNode) and node_tag(item) == "str":
            out.append(A.Use(False, A.Str(r.span(item), item.value), r.span(item)))
        elif isinstance(item, MappingNode) and len(item.value) == 2:
            out += _pinned_use(r, item)
        elif isinstance(item, MappingNode):
            one = r.single(item, "a `use` of the standard library")
            if one is None:
                continue
            name, key, value = one
            if name != "std":
                r.error("E103", f"unknown keyword `{name}` in `use`", key, 'write `- std: agents` or `- "file.mlab"`')
            elif isinstance(value, ScalarNode) and node_tag(value) == "str":
                out.append(A.Use(True, A.Str(r.span(value), value.value), r.span(item)))
            else:
                r.wrong(value, "`std`", "the name of a standard-library module")
        else:
            r.wrong(item, "`use`", 'a file path or `std: NAME`')
    return out


def _pinned_use(r: YamlReader, item: MappingNode) -> list[A.Use]:
    """`- {std: agents, version: 3}`: `use std "agents" version 3`."""
    fields = {name: value for name, _, value in r.mapping(item, "a `use` of the standard library")}
    unknown = sorted(set(fields) - {"std", "version"})
    if unknown or "std" not in fields:
        r.error("E103", f"unknown keyword `{(unknown or ['version'])[0]}` in `use`", item,
                "write `- std: agents` or `- {std: agents, version: 3}`")
        return []
    name, version = fields["std"], fields["version"]
    if not (isinstance(name, ScalarNode) and node_tag(name) == "str"):
        r.wrong(name, "`std`", "the name of a standard-library module")
        return []
    if not (isinstance(version, ScalarNode) and node_tag(version) == "int"):
        r.wrong(version, "`version`", "a release number of the standard library")
        return []
    return [A.Use(True, A.Str(r.span(name), name.value), r.span(item), A.Int(r.span(version), int(version.value)))]


def _declarations(r: YamlReader, kind: str, node: Node) -> list[A.Decl]:
    out = []
    what = kind[:-1] if kind != "actions" else "action set"
    for name, key, body in r.mapping(node, f"`{kind}`", duplicate_code="E301"):
        ident = r.key_ident(name, key, f"a{'n' if what[0] in 'ae' else ''} {what}")
        if ident is None:
            continue
        span = r.entry_span(key, body)
        entries: list = []
        if node_tag(body) == "null":
            body_node = None
        else:
            body_node = body
        if kind == "tasks":
            if body_node is not None:
                r.fields(body_node, f"task `{name}`", _task_handlers(r), entries)
            out.append(A.Task(ident, tuple(entries), span))
        elif kind == "actions":
            parent = None
            if body_node is not None:
                entries, parent = _actions(r, body_node, name)
            out.append(A.Actions(ident, tuple(entries), span, parent))
        elif kind == "agents":
            parent = None
            external = body_node is not None and is_external(body_node)
            if body_node is not None:
                handlers = external_handlers(r) if external else agent_handlers(r)
                holder: list = []
                handlers["extends"] = lambda _n, _k, v, _o: holder.append(r.ident(v, "`extends`"))
                r.fields(body_node, f"agent `{name}`", handlers, entries)
                parent = holder[0] if holder else None
            out.append((A.ExternalAgent if external else A.Agent)(ident, tuple(entries), span, parent))
        else:
            if body_node is not None:
                r.fields(body_node, f"experiment `{name}`", experiment_handlers(r), entries)
            out.append(A.Experiment(ident, tuple(entries), span))
    return out


# ---- tasks --------------------------------------------------------------------

def _task_handlers(r: YamlReader) -> dict:
    return {
        "title": one_value(r, A.Title), "category": one_value(r, A.Category, "name"), "problem": one_value(r, A.Problem),
        "starter": one_value(r, A.Starter), "read_only": one_value(r, A.ReadOnly), "requires": one_value(r, A.Requires),
        "data": lambda n, k, v, out: _data(r, v, out),
        "submission": lambda n, k, v, out: _submission(r, k, v, out),
        "metric": lambda n, k, v, out: _metric(r, k, v, out),
        "baseline": lambda n, k, v, out: _baseline(r, k, v, out),
        "success": lambda n, k, v, out: _success(r, k, v, out),
        "agent": ident_entry(r, A.DefaultAgent),
        "limits": limits_entry(r),
        "hardware": lambda n, k, v, out: _hardware(r, k, v, out),
        "demo": one_value(r, A.Demo),
        "evaluator": lambda n, k, v, out: _evaluator(r, k, v, out),
        "version": one_value(r, A.Version, "auto"),
        "changes": lambda n, k, v, out: _changes(r, k, v, out),
        "issue": lambda n, k, v, out: _issues(r, k, v, out),
        "reference": lambda n, k, v, out: _references(r, v, out),
        "thresholds": lambda n, k, v, out: out.append(A.Thresholds(r.entry_span(k, v),
                                                                   tuple(key_values(r, v, "`thresholds`")))),
        "leaderboard": lambda n, k, v, out: _leaderboard(r, k, v, out),
        "gym": lambda n, k, v, out: out.append(A.Gym(r.entry_span(k, v), tuple(_gym_items(r, v)))),
    }


def _gym_items(r, node) -> list:
    """`gym: {shaping: validation, weight: 0.1}`: the shaping is a name, as in the .mlab form."""
    items = []
    for name, key, value in r.mapping(node, "`gym`"):
        if not r.present(key, value, "`gym`"):
            continue
        ident = r.key_ident(name, key, "a setting of `gym`")
        v = r.value(value, "name" if name == "shaping" else "auto")
        if ident is not None and v is not None:
            items.append(A.Limit(ident, v, r.entry_span(key, value)))
    return items


def _changes(r, key, value, out):
    """`changes: [{version: 2, what: ..., because: ...}]`."""
    items = []
    for node in (value.value if isinstance(value, SequenceNode) else [value]):
        parts = parts_of(r, node, "a change", {"version": "auto", "what": "str", "because": "str"},
                         required=("version", "what", "because"))
        if parts is None:
            if not isinstance(node, MappingNode):
                r.wrong(node, "`changes`", "a list of `{version: 2, what: ..., because: ...}`")
        elif None not in parts.values():
            items.append(A.Change(parts["version"], parts["what"], parts["because"], r.span(node)))
    out.append(A.Changes(r.entry_span(key, value), tuple(items)))


def _issues(r, key, value, out):
    """`issue: [{text: ..., since: 1, fixed: 2}]` (one known issue each)."""
    for node in (value.value if isinstance(value, SequenceNode) else [value]):
        parts = parts_of(r, node, "an issue", {"text": "str", "since": "auto", "fixed": "auto"},
                         required=("text", "since"))
        if parts is None:
            if not isinstance(node, MappingNode):
                r.wrong(node, "`issue`", "a list of `{text: ..., since: 1, fixed: 2}`")
        elif parts["text"] is not None and parts["since"] is not None:
            out.append(A.KnownIssue(r.span(node), parts["text"], parts["since"], parts.get("fixed")))


def _leaderboard(r, key, value, out):
    """`leaderboard: {file: leaderboard.csv, column: score, source: "..."}`."""
    parts = parts_of(r, value, "`leaderboard`", {"file": "str", "column": "str", "source": "str"}, required=("file",))
    if parts is None:
        if not isinstance(value, MappingNode):
            r.wrong(value, "`leaderboard`", 'a mapping `{file: leaderboard.csv, column: score, source: "..."}`')
    elif parts["file"] is not None:
        out.append(A.Leaderboard(r.entry_span(key, value), parts["file"], parts.get("column"), parts.get("source")))


def _references(r, node, out):
    """reference: {label: {value: N, source: "..."}} → one `reference` entry per label."""
    for label, key, body in r.mapping(node, "`reference`"):
        parts = parts_of(r, body, f"reference `{label}`", {"value": "auto", "source": "str"}, required=("value",))
        if parts is None:
            r.wrong(body, f"reference `{label}`", 'a mapping `{value: 0.912, source: "..."}`')
        elif parts["value"] is not None:
            out.append(A.Reference(r.entry_span(key, body), A.Str(r.span(key), label), parts["value"],
                                   parts.get("source")))


def _submission(r, key, value, out):
    span = r.entry_span(key, value)
    if isinstance(value, ScalarNode):
        file = r.value(value)
        if file is not None:
            out.append(A.Submission(span, file, None))
        return
    parts = parts_of(r, value, "`submission`", {"file": "str", "columns": "str", "column": "node"},
                     required=("file",))
    if parts is None:
        r.wrong(value, "`submission`", "a file name or a mapping with `file` and `columns`") \
            if not isinstance(value, MappingNode) else None
    elif parts.get("file") is not None:
        rules = _column_rules(r, parts["column"]) if "column" in parts else ()
        out.append(A.Submission(span, parts["file"], parts.get("columns"), rules))


def _column_rules(r, node) -> tuple:
    """`column: {categories: {kind: ranking, max: 20, from: "category_key.csv:id"}, osd: probability}`:
    a submission's column constraints by column, a kind alone or a mapping of the .mlab words."""
    rules = []
    for name, key, value in r.mapping(node, "`column` (the column constraints)"):
        column = A.Str(r.span(key), name)
        if isinstance(value, ScalarNode):
            kind = r.ident(value, f"the constraint of `{name}`")
            if kind is not None:
                rules.append(A.ColumnRule(r.entry_span(key, value), column, kind))
            continue
        parts = parts_of(r, value, f"the constraint of `{name}`",
                         {"kind": "ident", "max": "auto", "exactly": "auto", "from": "str", "to": "auto"},
                         required=("kind",))
        if parts is None:
            if not isinstance(value, MappingNode):
                r.wrong(value, f"the constraint of `{name}`", "a kind or a mapping with `kind`")
            continue
        if parts.get("kind") is None:
            continue
        count = next((w for w in ("max", "exactly") if w in parts), None)
        count_ident = A.Ident(count, parts[count].span) if count else None
        rules.append(A.ColumnRule(r.entry_span(key, value), column, parts["kind"], count_ident,
                                  parts.get(count) if count else None, parts.get("from"), parts.get("to")))
    return tuple(rules)


def _metric(r, key, value, out):
    span = r.entry_span(key, value)
    if isinstance(value, ScalarNode):
        name = r.ident(value, "`metric`")
        if name is not None:
            out.append(A.Metric(span, name, None, None))
        return
    parts = parts_of(r, value, "`metric`", {"name": "ident", "params": "node", "on": "str", "direction": "ident"},
                     required=("name",))
    if parts is None:
        if not isinstance(value, MappingNode):
            r.wrong(value, "`metric`", "a metric name or a mapping with `name`, `params`, `on` and `direction`")
        return
    if parts["name"] is not None:
        direction = parts.get("direction")
        if direction is not None and direction.value not in ("lower_is_better", "higher_is_better"):
            r.error("E405", f"`direction` cannot be `{direction.value}`", direction.span,
                    "write lower_is_better or higher_is_better")
        params = ()
        if parts.get("params") is not None:
            params = tuple(A.Param(item.key, item.value, item.span)
                           for item in key_values(r, parts["params"], f"the parameters of `{parts['name'].value}`"))
        out.append(A.Metric(span, parts["name"], parts.get("on"), direction, params))


def _baseline(r, key, value, out):
    span = r.entry_span(key, value)
    parts = parts_of(r, value, "`baseline`", {"run": "str", "value": "auto", "because": "str"})
    if parts is None:
        r.wrong(value, "`baseline`", "a mapping: `{run: train.py}` or `{value: 0.5, because: ...}`")
    elif "run" in parts and len(parts) == 1:
        if parts["run"] is not None:
            out.append(A.BaselineRun(span, parts["run"]))
    elif set(parts) == {"value", "because"}:
        if parts["value"] is not None and parts["because"] is not None:
            out.append(A.BaselineValue(span, parts["value"], parts["because"]))
    else:
        r.error("E308", "`baseline` takes either `run` alone or both `value` and `because`", key)


def _success(r, key, value, out):
    parts = parts_of(r, value, "`success`", {"improvement": "auto"}, required=("improvement",))
    if parts is None:
        if not isinstance(value, MappingNode):
            r.wrong(value, "`success`", "a mapping `{improvement: 10%}`")
    elif parts["improvement"] is not None:
        out.append(A.Success(r.entry_span(key, value), parts["improvement"]))


def _hardware(r, key, value, out):
    items = []
    for name, item_key, item in r.mapping(value, "`hardware`"):
        if not r.present(item_key, item, "`hardware`"):
            continue
        ident = r.key_ident(name, item_key, "a hardware entry")
        need = None
        if isinstance(item, MappingNode):
            parts = parts_of(r, item, f"hardware `{name}`", {"value": "auto", "need": "ident"}, required=("value",))
            if parts is None:
                continue
            v, need = parts["value"], parts.get("need")
            if need is not None and need.value not in ("required", "optional"):
                r.error("E405", f"`need` cannot be `{need.value}`", need.span, "write required or optional")
        else:
            v = r.value(item, "auto")
        if ident is not None and v is not None:
            items.append(A.HardwareEntry(ident, v, need, r.entry_span(item_key, item)))
    out.append(A.Hardware(r.entry_span(key, value), tuple(items)))


def _evaluator(r, key, value, out):
    parts = parts_of(r, value, "`evaluator`", {"function": "str", "because": "str"}, required=("function", "because"))
    if parts is None:
        if not isinstance(value, MappingNode):
            r.wrong(value, "`evaluator`", 'a mapping `{function: "evaluate.py:score", because: ...}`')
    elif parts["function"] is not None and parts["because"] is not None:
        out.append(A.Evaluator(r.entry_span(key, value), parts["function"], parts["because"]))


def _data(r, node, out):
    for name, key, body in r.mapping(node, "`data`"):
        ident = r.key_ident(name, key, "a data variant")
        entries: list = []
        if node_tag(body) != "null":
            r.fields(body, f"data `{name}`", _data_handlers(r), entries)
        if ident is not None:
            out.append(A.Data(r.entry_span(key, body), ident, tuple(entries)))


def _data_handlers(r: YamlReader) -> dict:
    return {
        "from": lambda n, k, v, out: _source(r, k, v, out),
        "split": lambda n, k, v, out: _split(r, k, v, out),
        "id": one_value(r, A.IdColumn), "answers": lambda n, k, v, out: _answers(r, k, v, out),
        "public": one_value(r, A.Public), "private": one_value(r, A.Private),
        "checksum": lambda n, k, v, out: _checksums(r, v, out),
        "prepare": one_value(r, A.Prepare),
        "validation": one_value(r, A.Validation, "auto"),
        "limits": limits_entry(r),
    }


def _answers(r, key, value, out):
    """`answers: [label]`, or `answers: {columns: [label], unlabelled: true}` (training rows may
    leave the answers blank: the .mlab `answers ["label"] unlabelled`)."""
    span = r.entry_span(key, value)
    if not isinstance(value, MappingNode):
        columns = r.value(value, "str", "`answers`")
        if columns is not None:
            out.append(A.Answers(span, columns))
        return
    parts = parts_of(r, value, "`answers`", {"columns": "str", "unlabelled": "node"}, required=("columns",))
    if parts is None or parts.get("columns") is None:
        return
    flag = parts.get("unlabelled")
    if flag is not None and (node_tag(flag) != "bool"):
        r.error("E401", "`unlabelled` takes true or false", flag)
        return
    allowed = flag is not None and flag.value.lower() == "true"
    out.append(A.Answers(span, parts["columns"], A.Ident("unlabelled", r.span(flag)) if allowed else None))


def _source(r, key, value, out):
    one = r.single(value, "`from`", 'a mapping with one key, the kind of source: `{csv: "task/lite/data.csv"}`')
    if one is None:
        return
    kind, kind_key, target = one
    ident = r.key_ident(kind, kind_key, "a data source")
    v = r.value(target, "name") if r.present(kind_key, target, "`from`") else None
    if ident is not None and v is not None:
        out.append(A.Source(r.entry_span(key, value), ident, v))


def _split(r, key, value, out):
    span = r.entry_span(key, value)
    if isinstance(value, ScalarNode):
        method = r.ident(value, "`split`")
        if method is not None:
            out.append(A.Split(span, method, (), None))
        return
    parts = parts_of(r, value, "`split`", {"method": "ident", "column": "str", "fraction": "auto", "seed": "auto",
                                           "last": "auto"}, required=("method",))
    if parts is None:
        if not isinstance(value, MappingNode):
            r.wrong(value, "`split`", "a method name or a mapping with `method`, `column`, `fraction`, `seed`")
        return
    args = tuple(parts[k] for k in ("column", "fraction") if parts.get(k) is not None)
    if parts.get("last") is not None:  # `last: 30 days` is `split time COLUMN last 30 days`
        args += (A.Name(parts["last"].span, "last"), *_horizon_values(parts["last"]))
    if parts["method"] is not None:
        out.append(A.Split(span, parts["method"], args, parts.get("seed")))


def _horizon_values(value: A.Value) -> tuple:
    """`30 days` (read as a string) → the number and the unit name, as the .mlab form writes them."""
    if isinstance(value, A.Str):
        number, _, unit = value.value.strip().partition(" ")
        if number.isdigit() and unit.strip():
            return A.Int(value.span, int(number)), A.Name(value.span, unit.strip())
    return (value,)


def _checksums(r, node, out):
    for name, key, digest in r.mapping(node, "`checksum`"):
        if r.present(key, digest, "`checksum`"):
            v = r.value(digest)
            if v is not None:
                out.append(A.Checksum(r.entry_span(key, digest), A.Str(r.span(key), name), v))


# ---- actions ------------------------------------------------------------------

def _actions(r: YamlReader, node: Node, set_name: str) -> tuple[list[A.Entry], A.Ident | None]:
    """The set's `drop` entries and actions, and the set it `extends` (keys that name no action)."""
    out: list[A.Entry] = []
    parent = None
    for name, key, body in r.mapping(node, f"action set `{set_name}`"):
        if name == "extends":
            parent = r.ident(body, "`extends`")
            continue
        if name == "drop":
            for item in (body.value if isinstance(body, SequenceNode) else [body]):
                value = r.value(item)
                if value is not None:
                    out.append(A.DropAction(r.span(item), value))
            continue
        entries: list = []
        if node_tag(body) != "null":
            r.fields(body, f"action {name!r}", _action_handlers(r), entries)
        out.append(A.Action(r.entry_span(key, body), A.Str(r.span(key), name), tuple(entries)))
    return out, parent


def _action_handlers(r: YamlReader) -> dict:
    return {
        "describe": one_value(r, A.Describe), "returns": one_value(r, A.Returns),
        "input": lambda n, k, v, out: _inputs(r, v, out),
        "does": lambda n, k, v, out: _does(r, k, v, out),
        "model": ident_entry(r, A.Tier),
        "tool": one_value(r, A.Tool),
    }


def _inputs(r, node, out):
    for name, key, body in r.mapping(node, "`input`"):
        ident = r.key_ident(name, key, "an input")
        parts = parts_of(r, body, f"input `{name}`", {"type": "ident", "default": "auto", "describe": "str"},
                       required=("type", "describe"))
        if parts is None:
            if not isinstance(body, MappingNode):
                r.wrong(body, f"input `{name}`", "a mapping with `type`, `describe` and maybe `default`")
            continue
        if ident is not None and parts["type"] is not None and parts["describe"] is not None:
            out.append(A.Input(r.entry_span(key, body), ident, parts["type"], parts.get("default"), parts["describe"]))


def _does(r, key, value, out):
    span = r.entry_span(key, value)
    if isinstance(value, ScalarNode):
        primitive = r.ident(value, "`does`")
        if primitive is not None:
            out.append(A.Does(span, primitive, ()))
        return
    one = r.single(value, "`does`", "a primitive name, or `{primitive: {parameter: value}}`")
    if one is None:
        return
    name, name_key, params_node = one
    primitive = r.key_ident(name, name_key, "a primitive")
    params = []
    if node_tag(params_node) != "null":
        for item in key_values(r, params_node, f"the parameters of `{name}`"):
            params.append(A.Param(item.key, item.value, item.span))
    if primitive is not None:
        out.append(A.Does(span, primitive, tuple(params)))
