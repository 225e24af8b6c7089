"""agent declarations (with `extends`) → agent IR, action table and templates."""
from __future__ import annotations


from .. import ast as A
from .actions import TIERS, TOOL_NAME, input_schema, tool_entry, usage_text
from .extends import ExtendsResolver
from .inherited import as_pinned, check_shown
from ..resources import spec_json
from .reply import check_reply, check_text_sections, fallback_reply, reply_templates
from .search import SEARCH_PROMPTS, lower_search, lower_search_agent
from .templates import (DEFAULT_FORMAT_ERROR, DEFAULT_PROBLEM, DEFAULT_TURN, TOOLS_ONLY_PROMPTS, check_says_how_to_reply,
                        check_template, locate, mention_pattern, mentions, template_variables, text_of)
from ..values import Reporter, describe, did_you_mean, duplicate_entries

FORMATS = ("sections", "json", "tools")
# `respond tools { ... }` settings: the allowed values, the first being the default.
TOOLS_SETTINGS = {"sections_required": ("false", "true"), "tool_choice": ("required", "auto"),
                  "parallel": ("off", "ordered"), "fallback": ("sections", "json", "none"),
                  "list_tools": ("false", "true")}
KINDS = ("text", "action", "json")
ROLES = ("reflection", "plan", "fact-check", "thought", "criticism", "speak")
MODEL_PARAMS = {"temperature": "number", "max_tokens": "int", "stop": "list", "top_p": "number"}
DEFAULTS = {"history": 3, "summarize_over": 5000, "retries": 5}


def _known_prompts() -> set[str]:
    spec = spec_json("primitives.json")
    names = {"summarize_observation", *TOOLS_ONLY_PROMPTS, *SEARCH_PROMPTS}
    for table in (spec["primitives"], spec["hooks"]):
        for item in table.values():
            names.update(item.get("prompts", []))
    return names


def empty_settings() -> dict:
    return {"action_set": None, "show": None, "unhide": [], "hide": [], "models": {}, "history": DEFAULTS["history"],
            "summarize_over": DEFAULTS["summarize_over"], "retries": DEFAULTS["retries"], "prompt": None,
            "format_error": None, "reply": None, "prompts": {}, "hooks": {"before_step": [], "after_step": []},
            "search": None, "pinned_away": []}


def _with_nodes(names: list[str], value: A.Value) -> list[tuple[str, A.Value]]:
    """Each name with the list item that wrote it, so a diagnostic can point at the item."""
    items = value.items if isinstance(value, A.List) else ()
    return [(name, next((i for i in items if isinstance(i, A.Str) and i.value == name), value)) for name in names]


def settings_copy(value):
    """Resolved settings for a child to change: their dicts, lists and tuples copied all the way
    down; the AST nodes and spans in them (frozen) and the plain values shared. (copy.deepcopy
    rebuilt every node too: 14 ms of a one-file check.)"""
    if isinstance(value, dict):
        return {key: settings_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [settings_copy(item) for item in value]
    if type(value) is tuple:
        return tuple(settings_copy(item) for item in value)
    return value


class AgentResolver(ExtendsResolver):
    """Applies an agent's entries over its parent's settings (lower/extends.py)."""

    kind, plural, unknown_code = "agent", "agents", "E304"

    def __init__(self, agents: dict[str, A.Agent], report: Reporter,
                 pinned: dict[str, tuple[str, set[str]]] | None = None):
        super().__init__(agents, report)
        self.agents = agents
        self.pinned = pinned or {}  # file -> (std folder, actions std came to show after its pin)

    def empty(self) -> dict:
        return empty_settings()

    def inherit(self, decl: A.Agent, parent_result: dict) -> dict:
        return as_pinned(decl, settings_copy(parent_result), self.pinned)

    def apply(self, decl: A.Agent, base: dict) -> dict:
        return self._apply(decl, base)

    def _apply(self, decl: A.Agent, s: dict) -> dict:
        report = self.report
        where = f"agent `{decl.name.value}`"
        duplicate_entries(decl.entries, report, where)
        for entry in decl.entries:
            if isinstance(entry, A.UsesActions):
                s["action_set"] = entry.name
            elif isinstance(entry, A.Show):
                names = report.string_list(entry.value, "shown actions") or []
                if s["show"] is None and decl.parent is not None:
                    # the parent shows every action: `show` only takes names off the hidden list
                    s["unhide"] = s["unhide"] + _with_nodes(names, entry.value)
                else:
                    s["show"] = (s["show"] or []) + _with_nodes(names, entry.value)
                s["hide"] = [h for h in s["hide"] if h[0] not in names]
            elif isinstance(entry, A.Hide):
                names = report.string_list(entry.value, "hidden actions") or []
                s["hide"] = s["hide"] + _with_nodes(names, entry.value)
            elif isinstance(entry, A.Model):
                self.model_entry(entry, s)
            elif isinstance(entry, A.History):
                s["history"] = report.integer(entry.value, "`history`", minimum=0)
            elif isinstance(entry, A.Summarize):
                s["summarize_over"] = report.integer(entry.value, "`summarize observations over`", minimum=1)
            elif isinstance(entry, A.Retries):
                s["retries"] = report.integer(entry.value, "`retries`", minimum=0)
            elif isinstance(entry, A.Prompt):
                report.string(entry.value, "`prompt`")
                s["prompt"] = entry.value
            elif isinstance(entry, A.FormatError):
                report.string(entry.value, "`format_error`")
                s["format_error"] = entry.value
            elif isinstance(entry, A.Respond):
                s["reply"] = self._respond(entry)
            elif isinstance(entry, A.DropSection):
                self._drop(entry, s, where)
            elif isinstance(entry, A.Prompts):
                self._prompts(entry, s, where)
            elif isinstance(entry, A.Hook):
                self._hook(entry, s)
            elif isinstance(entry, A.Search):
                inherited = s["search"] if s["search"] and not s["search"].get("_broken") else None
                s["search"] = lower_search(entry, inherited, report) or {"_broken": True}
        return s

    def model_entry(self, entry: A.Model, s: dict) -> None:
        tier = self.report.choice(entry.tier, TIERS, "a model tier")
        default = self.report.string(entry.default, "`model ... default`")
        if tier is None:
            return
        params: dict = {}
        for item in entry.params:
            key = item.key.value
            kind = MODEL_PARAMS.get(key)
            if kind is None:
                self.report.error("E403", f"unknown model setting `{key}`", item.key.span,
                                  did_you_mean(key, MODEL_PARAMS, "settings"))
            elif kind == "list":
                params[key] = self.report.string_list(item.value, "stop sequences")
            elif kind == "int":
                params[key] = self.report.integer(item.value, f"`{key}`", minimum=1)
            else:
                params[key] = self.report.number(item.value, f"`{key}`")
        s["models"][tier] = {"default": default, "params": params}

    def _respond(self, entry: A.Respond) -> dict | None:
        fmt = self.report.choice(entry.format, FORMATS, "a reply format")
        sections = []
        for section in entry.sections:
            name = self.report.string(section.name, f"a {section.word} name")
            instruction = self.report.string(section.instruction, f"the instruction of {section.word} {name!r}")
            if name is None:
                continue
            expected_word = "field" if fmt == "json" else "section"
            if fmt and section.word != expected_word:
                self.report.error("E405", f"`respond {fmt}` holds `{expected_word}` entries, not `{section.word}`",
                                  section.span)
            if not name.strip() or "\n" in name or (fmt in ("sections", "tools") and ":" in name) or \
                    (fmt == "json" and "" in [part.strip() for part in name.split(".")]):
                self.report.error("E705", f"{name!r} cannot be a {section.word} name", section.name.span,
                                  hint="use one line of text without a colon" if section.word == "section"
                                  else "use a dotted path of non-empty keys, e.g. \"thoughts.text\"")
            role = None
            if section.role and section.role.value in ROLES:
                role = section.role.value
            elif section.role:
                self.report.error("E706", f"unknown role `{section.role.value}`", section.role.span,
                                  did_you_mean(section.role.value, ROLES, "roles"))
            kind = section.kind.value if section.kind else "text"
            sections.append({"name": name, "kind": kind, "role": role, "instruction": instruction or "",
                             "_span": section.name.span})
        settings = self._tools_settings(entry, fmt)
        if fmt is None:
            return None
        reply = {"format": fmt, "sections": sections, "_span": entry.span}
        if fmt == "tools":
            reply["settings"] = settings
        return reply

    def _tools_settings(self, entry: A.Respond, fmt: str | None) -> dict:
        """The settings of a `respond tools` block, defaults filled in; settings elsewhere are errors."""
        settings = {key: allowed[0] for key, allowed in TOOLS_SETTINGS.items()}
        seen: set[str] = set()
        for item in entry.settings:
            key = item.key.value
            if fmt != "tools":
                if fmt is not None:
                    self.report.error("E403", f"`respond {fmt}` takes no setting `{key}`", item.key.span,
                                      hint="settings such as `tool_choice` belong to `respond tools { ... }`")
                continue
            allowed = TOOLS_SETTINGS.get(key)
            if allowed is None:
                self.report.error("E403", f"`respond tools` has no setting `{key}`", item.key.span,
                                  did_you_mean(key, TOOLS_SETTINGS, "settings"))
                continue
            if key in seen:
                self.report.error("E302", f"setting `{key}` is given twice in `respond tools`", item.key.span)
            seen.add(key)
            value = item.value
            word = value.value if isinstance(value, A.Name) else None
            if word is None:
                self.report.error("E401", f"setting `{key}` takes one of {', '.join(allowed)}, not "
                                  f"{describe(value)}", value.span)
            elif word not in allowed:
                self.report.error("E405", f"setting `{key}` cannot be `{word}`", value.span,
                                  did_you_mean(word, allowed))
            else:
                settings[key] = word
                settings.setdefault("_spans", {})[key] = item.span
        if fmt == "tools" and settings["sections_required"] == "true" and \
                not any((s.kind is None or s.kind.value == "text") for s in entry.sections):
            self.report.error("E405", "`sections_required true` needs text sections, and this block declares none",
                              settings["_spans"]["sections_required"],
                              hint='add e.g. `section "Thought" role thought "..."`, or remove the setting')
        return settings

    def _drop(self, entry: A.DropSection, s: dict, where: str) -> None:
        name = self.report.string(entry.name, "`drop section`")
        reply = s["reply"]
        if name is None or reply is None:
            if reply is None:
                self.report.error("E704", f"{where} has no reply format to drop {name!r} from", entry.name.span)
            return
        names = [sec["name"] for sec in reply["sections"]]
        if name not in names:
            self.report.error("E704", f"{where} has no section {name!r}", entry.name.span,
                              did_you_mean(name, names, "sections"))
            return
        reply["sections"] = [sec for sec in reply["sections"] if sec["name"] != name]

    def _prompts(self, entry: A.Prompts, s: dict, where: str) -> None:
        known = _known_prompts()
        seen = set()
        for item in entry.items:
            key = item.name.value
            if key not in known:
                self.report.error("E605", f"no primitive or hook uses a prompt named `{key}`", item.name.span,
                                  did_you_mean(key, known, "prompts"))
                continue
            if key in seen:
                self.report.error("E302", f"prompt `{key}` is given twice in {where}", item.name.span)
            seen.add(key)
            self.report.string(item.value, f"prompt `{key}`")
            s["prompts"][key] = item.value

    def _hook(self, entry: A.Hook, s: dict) -> None:
        hooks = spec_json("primitives.json")["hooks"]
        name, time = entry.name.value, entry.time.value
        if name not in hooks:
            self.report.error("E402", f"unknown hook `{name}`", entry.name.span, did_you_mean(name, hooks, "hooks"))
        elif hooks[name]["when"] != time:
            self.report.error("E405", f"hook `{name}` runs {hooks[name]['when']}, not {time}", entry.time.span)
        elif name not in s["hooks"][time]:
            s["hooks"][time].append(name)


def lower_agent(decl: A.Agent, settings: dict, action_sets: dict[str, list[dict]],
                all_action_names: set[str], report: Reporter) -> tuple[dict, dict, dict[str, str]] | None:
    """The agent IR, its action table and its templates (name → text)."""
    name = decl.name.value
    where = f"agent `{name}`"
    set_ref = settings["action_set"]
    if set_ref is None:
        report.error("E308", f"{where} names no action set", decl.name.span, hint="add e.g. `actions core`")
        return None
    if set_ref.value not in action_sets:
        report.error("E303", f"unknown action set `{set_ref.value}`", set_ref.span,
                     did_you_mean(set_ref.value, action_sets, "action sets"))
        return None
    actions = action_sets[set_ref.value]
    names = [a["name"] for a in actions]
    check_shown(decl, settings, set_ref, names, report)
    shown = set(names) if settings["show"] is None else {n for n, _ in settings["show"]}
    shown -= {n for n, _ in settings["hide"]}
    if settings["search"] is not None:
        if settings["search"].get("_broken"):
            return None
        found = lower_search_agent(decl, settings, report)
        if found is None:
            return None
        texts, search = found
        return artifacts(decl, settings, set_ref.value, actions, shown, texts, reply=None, search=search)
    reply = settings["reply"]
    if reply is None:
        report.error("E308", f"{where} declares no reply format", decl.name.span,
                     hint="add `respond sections { ... }`")
        return None
    tools_mode = reply["format"] == "tools"
    fallback = fallback_reply(reply, report, where) if tools_mode else None
    if tools_mode:
        readable = check_reply(fallback, report, decl) if fallback else check_text_sections(reply, report)
        _check_tool_names([a for a in actions if a["name"] in shown], report, where)
    else:
        readable = check_reply(reply, report, decl)
    if settings["prompt"] is None:
        report.error("E308", f"{where} has no `prompt`", decl.name.span)
        return None

    kind = "tools" if tools_mode else "text"
    templates = _agent_prompts(decl, settings, tools_mode, where, report)
    _check_needed_prompts(decl, settings, actions, templates, where, report)
    unusable = sorted(all_action_names - set(names))
    texts = _template_texts(templates, unusable, set_ref.value, where, kind, report)
    _check_prompt_and_reply(settings, reply, fallback, kind, unusable, where, report)
    if not readable:
        return None
    clean_reply = reply_templates(reply, fallback, tools_mode, texts)
    return artifacts(decl, settings, set_ref.value, actions, shown, texts, reply=clean_reply, search=None)


def _agent_prompts(decl: A.Agent, settings: dict, tools_mode: bool, where: str,
                   report: Reporter) -> dict[str, tuple[str, A.Value | None]]:
    """The agent's templates (name → text and the value it came from): its prompt, its format error
    and the prompts of its kind (a search's or a tool agent's own prompts refused where they do not run)."""
    templates: dict[str, tuple[str, A.Value | None]] = {}
    templates["prompt"] = (text_of(settings["prompt"]), settings["prompt"])
    fe = settings["format_error"]
    templates["format_error"] = (text_of(fe), fe) if fe is not None else (DEFAULT_FORMAT_ERROR, None)
    own = {item.name.value for entry in decl.entries if isinstance(entry, A.Prompts) for item in entry.items}
    for key, value in settings["prompts"].items():
        if key in SEARCH_PROMPTS or (key in TOOLS_ONLY_PROMPTS and not tools_mode):
            if key not in own:  # inherited from an agent of another kind: unused here, not a mistake here
                continue
        if key in SEARCH_PROMPTS:
            report.error("E605", f"{where} runs the linear loop, so it uses no `{key}` prompt", value.span,
                         hint=f"a `{key}` prompt is an operator of a tree search: declare `search greedy {{ ... }}`")
            continue
        if key in TOOLS_ONLY_PROMPTS and not tools_mode:
            report.error("E605", f"{where} does not reply with tools, so it uses no `{key}` prompt", value.span,
                         hint=f"a `{key}` prompt is part of a `respond tools` agent's conversation")
            continue
        templates[key] = (text_of(value), value)
    if tools_mode:
        templates.setdefault("problem", (DEFAULT_PROBLEM, None))
        templates.setdefault("turn", (DEFAULT_TURN, None))
    return templates


def _check_needed_prompts(decl: A.Agent, settings: dict, actions: list[dict], templates: dict, where: str,
                          report: Reporter) -> None:
    """E604: a prompt that an action or a hook of the agent needs and the agent lacks."""
    needed = {"summarize_observation": "summarizing long observations"}
    for action in actions:
        for prompt in action["prompts"]:
            needed.setdefault(prompt, f"action {action['name']!r}")
    hooks = spec_json("primitives.json")["hooks"]
    for time in ("before_step", "after_step"):
        for hook in settings["hooks"][time]:
            for prompt in hooks[hook]["prompts"]:
                needed.setdefault(prompt, f"hook `{hook}`")
    for prompt, user in sorted(needed.items()):
        if prompt not in templates:
            report.error("E604", f"{where} has no `{prompt}` prompt, needed by {user}", decl.name.span,
                         hint=f"add it to a `prompts {{ {prompt} \"\"\"...\"\"\" }}` block (or inherit it)")


def _template_texts(templates: dict, unusable: list[str], set_name: str, where: str, kind: str,
                    report: Reporter) -> dict[str, str]:
    """Each template checked (Jinja, E603 for an action the agent cannot call) and its file's text."""
    texts: dict[str, str] = {}
    for key, (text, value) in templates.items():
        if isinstance(value, A.Str):  # another value type was reported as E401 already
            check_template(text, value, key, report, where, kind=kind)
            for other in unusable:
                if mentions(text, other):
                    report.error("E603", f"the {key} template of {where} names {other!r}, an action it cannot call",
                                 locate(mention_pattern(other), text, value),
                                 hint=f"add the action to `{set_name}` or reword the prompt")
        texts[f"{key}.j2"] = text if text.endswith("\n") else text + "\n"
    return texts


def _check_prompt_and_reply(settings: dict, reply: dict, fallback: dict | None, kind: str, unusable: list[str],
                            where: str, report: Reporter) -> None:
    """The prompt renders the tools a fallback needs (E709) and says how to reply; no reply section
    names an action the agent cannot call (E603)."""
    if fallback is not None and isinstance(settings["prompt"], A.Str):
        used = template_variables(text_of(settings["prompt"]))
        if used is not None and "tools" not in used:
            report.error("E709", f"the prompt of {where} never renders `{{{{ tools }}}}`, so a model that cannot "
                         f"take tools (the `{fallback['format']}` fallback) would not see them",
                         settings["prompt"].span,
                         hint="add `{{ tools }}` to the prompt (it renders empty while the tools are sent "
                              "natively), or declare `fallback none`")
    if kind == "text" and isinstance(settings["prompt"], A.Str):
        check_says_how_to_reply(text_of(settings["prompt"]), settings["prompt"], reply, where, report)
    for section in reply["sections"]:
        for other in unusable:
            if mentions(section["instruction"], other):
                report.error("E603", f"section {section['name']!r} names {other!r}, an action {where} cannot call",
                             section["_span"])


def _check_tool_names(shown: list[dict], report: Reporter, where: str) -> None:
    """Every action a tools agent shows needs a tool name providers accept, and one of its own."""
    by_name: dict[str, dict] = {}
    for action in shown:
        tool_name = action["tool_name"]
        if not TOOL_NAME.match(tool_name) and not action["_tool_declared"]:  # a declared one is reported already
            report.error("E707", f"{where} shows action {action['name']!r}, whose tool name {tool_name!r} "
                         "providers refuse", action["_tool_span"],
                         hint='name the tool in the action: `tool "a_name"` (a letter or `_` first, then up '
                              'to 63 letters, digits, `_` or `-`)')
        if tool_name in by_name:
            first = by_name[tool_name]
            report.error("E708", f"{where} shows actions {first['name']!r} and {action['name']!r}, which both "
                         f"have the tool name {tool_name!r}", action["_tool_span"],
                         hint=f'give one of them a tool name of its own: `tool "{tool_name}_2"`')
        else:
            by_name[tool_name] = action


def artifacts(decl: A.Agent, settings: dict, action_set: str, actions: list[dict], shown: set[str],
               texts: dict[str, str], *, reply: dict | None, search: dict | None) -> tuple[dict, dict, dict[str, str]]:
    """The agent IR and action table of a linear agent (a reply format) or a search agent (a policy)."""
    name = decl.name.value
    table = {"agent": name, "action_set": action_set, "actions": [
        dict(clean_action(a), shown=a["name"] in shown, usage=usage_text(a["inputs"]),
             input_schema=input_schema(a["inputs"]), tool=tool_entry(a))
        for a in actions]}
    models = {tier: settings["models"].get(tier, {"default": None, "params": {}}) for tier in TIERS}
    ir = {"name": name, "extends": decl.parent.value if decl.parent else None, "action_set": action_set,
          "shown": [a["name"] for a in actions if a["name"] in shown], "models": models,
          "history_steps": settings["history"], "summarize_over_chars": settings["summarize_over"],
          "format_retries": settings["retries"], "reply": reply, "hooks": settings["hooks"],
          "search": search, "templates": {k[:-3]: f"templates/{k}" for k in sorted(texts)}}
    return ir, table, texts


def clean_action(action: dict) -> dict:
    return {k: v for k, v in action.items() if not k.startswith("_")}
