"""The agents and experiments of the YAML form (yaml_decls reads the rest)."""
from __future__ import annotations

from ruamel.yaml.nodes import MappingNode, SequenceNode

from .. import ast as A
from .fields import ident_entry, key_values, limits_entry, one_value, parts_of
from .reader import YamlReader, node_tag


# ---- agents -------------------------------------------------------------------

def agent_handlers(r: YamlReader) -> dict:
    return {
        "actions": ident_entry(r, A.UsesActions),
        "show": one_value(r, A.Show), "hide": one_value(r, A.Hide),
        "model": lambda n, k, v, out: _models(r, v, out),
        "history": one_value(r, A.History, "auto"), "summarize": one_value(r, A.Summarize, "auto"),
        "retries": one_value(r, A.Retries, "auto"),
        "prompt": one_value(r, A.Prompt), "format_error": one_value(r, A.FormatError),
        "respond": lambda n, k, v, out: _respond(r, k, v, out),
        "drop": lambda n, k, v, out: _drops(r, v, out),
        "prompts": lambda n, k, v, out: _prompts(r, k, v, out),
        "before_step": lambda n, k, v, out: _hooks(r, n, k, v, out),
        "after_step": lambda n, k, v, out: _hooks(r, n, k, v, out),
        "search": lambda n, k, v, out: _search(r, k, v, out),
    }


def is_external(body) -> bool:
    """Whether an agent's mapping says `external: true` (an agent from outside mlab)."""
    return isinstance(body, MappingNode) and any(
        getattr(k, "value", None) == "external" and str(getattr(v, "value", "")).lower() == "true"
        for k, v in body.value)


def external_handlers(r: YamlReader) -> dict:
    """The keys of an external agent (`external: true`): its command, requirements, environment, models,
    submission file and limits."""
    return {
        "external": lambda n, k, v, out: None,
        "command": one_value(r, A.Command), "requires": one_value(r, A.Requires),
        "no_deps": one_value(r, A.NoDeps), "submits": one_value(r, A.Submits),
        "dialect": one_value(r, A.Dialect, mode="name"),
        "env": lambda n, k, v, out: out.append(A.Env(r.entry_span(k, v), tuple(key_values(r, v, "`env`")))),
        "model": lambda n, k, v, out: _models(r, v, out),
        "limits": limits_entry(r),
    }


def _search(r, key, value, out):
    """`search: {greedy: {drafts: 5, score: "...", select: holdout}}`."""
    one = r.single(value, "`search`", "a mapping with one key, the policy (`greedy`, `mcts` or `evolution`)")
    if one is None:
        return
    policy, policy_key, body = one
    ident = r.key_ident(policy, policy_key, "a search policy")
    items = []
    if node_tag(body) != "null":
        for name, item_key, item in r.mapping(body, f"`search {policy}`"):
            if not r.present(item_key, item, f"`search {policy}`"):
                continue
            setting = r.key_ident(name, item_key, f"a parameter of `search {policy}`")
            v = r.value(item, "name" if name in ("score", "select") else "auto")
            if setting is not None and v is not None:
                items.append(A.Limit(setting, v, r.entry_span(item_key, item)))
    if ident is not None:
        out.append(A.Search(r.entry_span(key, value), ident, tuple(items)))


def _models(r, node, out):
    for tier, key, body in r.mapping(node, "`model`"):
        ident = r.key_ident(tier, key, "a model tier")
        if not r.present(key, body, "`model`"):
            continue
        span = r.entry_span(key, body)
        if isinstance(body, MappingNode):
            default, params = None, []
            for name, item_key, item in r.mapping(body, f"model `{tier}`"):
                if not r.present(item_key, item, f"model `{tier}`"):
                    continue
                if name == "default":
                    default = r.value(item)
                else:
                    setting = r.key_ident(name, item_key, "a model setting")
                    v = r.value(item, "auto")
                    if setting is not None and v is not None:
                        params.append(A.Limit(setting, v, r.entry_span(item_key, item)))
            if default is None:
                r.error("E308", f"model `{tier}` needs `default`", key, "add `default: provider/model`")
                continue
        else:
            default, params = r.value(body), []
        if ident is not None and default is not None:
            out.append(A.Model(span, ident, default, tuple(params)))


def _respond(r, key, value, out):
    one = r.single(value, "`respond`", "a mapping with one key, the reply format (`sections`, `json` or `tools`)")
    if one is None:
        return
    fmt, fmt_key, body = one
    ident = r.key_ident(fmt, fmt_key, "a reply format")
    word = "field" if fmt == "json" else "section"
    sections, settings = [], []
    if r.present(fmt_key, body, "`respond`"):
        section_map = body
        if fmt == "tools":  # `tools: {sections: {NAME: ...}, tool_choice: auto, ...}`
            section_map = None
            for name, name_key, item in r.mapping(body, "`respond tools`"):
                if name == "sections":
                    section_map = item if r.present(name_key, item, "`respond tools`") else None
                elif r.present(name_key, item, "`respond tools`"):
                    setting = r.key_ident(name, name_key, "a setting of `respond tools`")
                    v = r.value(item, "name")
                    if setting is not None and v is not None:
                        settings.append(A.RespondSetting(setting, v, r.entry_span(name_key, item)))
        if section_map is not None:
            sections = _sections(r, section_map, fmt, word)
    if ident is not None:
        out.append(A.Respond(r.entry_span(key, value), ident, tuple(sections), tuple(settings)))


def _sections(r, body, fmt, word) -> list:
    sections = []
    for name, name_key, item in r.mapping(body, f"`respond {fmt}`"):
        if not r.present(name_key, item, f"`respond {fmt}`"):
            continue
        span = r.entry_span(name_key, item)
        name_value = A.Str(r.span(name_key), name)
        if isinstance(item, MappingNode):
            parts = parts_of(r, item, f"{word} {name!r}", {"role": "ident", "kind": "ident", "instruction": "str"},
                             required=("instruction",))
            if parts is None or parts["instruction"] is None:
                continue
            kind = parts.get("kind")
            if kind is not None and kind.value not in ("text", "action", "json"):
                r.error("E405", f"`kind` cannot be `{kind.value}`", kind.span, "kinds: text, action, json")
            sections.append(A.Section(word, name_value, parts.get("role"), kind, parts["instruction"], span))
        else:
            instruction = r.value(item)
            if instruction is not None:
                sections.append(A.Section(word, name_value, None, None, instruction, span))
    return sections


def _drops(r, node, out):
    items = node.value if isinstance(node, SequenceNode) else [node]
    for item in items:
        v = r.value(item)
        if v is not None:
            out.append(A.DropSection(r.span(item), v))


def _prompts(r, key, node, out):
    items = []
    for name, item_key, item in r.mapping(node, "`prompts`"):
        ident = r.key_ident(name, item_key, "a prompt")
        v = r.value(item) if r.present(item_key, item, "`prompts`") else None
        if ident is not None and v is not None:
            items.append(A.NamedPrompt(ident, v, r.entry_span(item_key, item)))
    out.append(A.Prompts(r.entry_span(key, node), tuple(items)))


def _hooks(r, when, key, node, out):
    time = A.Ident(when, r.span(key))
    for name in r.names(node, f"`{when}`"):
        out.append(A.Hook(name.span, time, name))


# ---- experiments --------------------------------------------------------------

def experiment_handlers(r: YamlReader, override: bool = False) -> dict:
    handlers = {
        "agents": one_value(r, A.ExpAgents, "name"),
        "models": lambda n, k, v, out: _exp_models(r, k, v, out),
        "runs": one_value(r, A.ExpRuns, "auto"), "data": one_value(r, A.ExpData, "name"),
        "limits": limits_entry(r),
    }
    if not override:
        handlers.update({
            "tasks": lambda n, k, v, out: _exp_tasks(r, k, v, out),
            "retries": one_value(r, A.ExpRetries, "auto"),
            "override": lambda n, k, v, out: _overrides(r, v, out),
            "override_agent": lambda n, k, v, out: _overrides(r, v, out, agent=True),
        })
    return handlers


def _exp_tasks(r, key, value, out):
    span = r.entry_span(key, value)
    if isinstance(value, MappingNode):
        one = r.single(value, "`tasks`")
        if one is None:
            return
        name, name_key, category = one
        if name != "category":
            r.error("E103", f"unknown keyword `{name}` in `tasks`", name_key, "write `tasks: {category: NAME}`")
            return
        ident = r.ident(category, "`category`")
        if ident is not None:
            out.append(A.ExpTasksCategory(span, ident))
        return
    v = r.value(value, "name")
    if v is not None:
        out.append(A.ExpTasks(span, v))


def _exp_models(r, key, value, out):
    if not isinstance(value, MappingNode):
        v = r.value(value)
        if v is not None:
            out.append(A.ExpModels(r.entry_span(key, value), None, v))
        return
    for tier, tier_key, models in r.mapping(value, "`models`"):
        ident = r.key_ident(tier, tier_key, "a model tier")
        v = r.value(models) if r.present(tier_key, models, "`models`") else None
        if ident is not None and v is not None:
            out.append(A.ExpModels(r.entry_span(tier_key, models), ident, v))


def _overrides(r, node, out, agent: bool = False):
    for name, key, body in r.mapping(node, "`override_agent`" if agent else "`override`"):
        ident = r.key_ident(name, key, "an agent" if agent else "a task")
        entries: list = []
        handlers = {"limits": limits_entry(r)} if agent else experiment_handlers(r, override=True)
        if node_tag(body) != "null":
            r.fields(body, f"override {'agent ' if agent else ''}`{name}`", handlers, entries)
        if ident is not None:
            out.append(A.ExpOverride(r.entry_span(key, body), ident, tuple(entries), agent=agent))
