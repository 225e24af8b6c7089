"""The tree-search agent's lowering (its policy, node evaluation and operator prompts) and the agent
artifacts that linear and search agents share: agent IR, action table and templates."""
from __future__ import annotations

from .. import ast as A
from ..values import Reporter
from .actions import TIERS, input_schema, tool_entry, usage_text
from .search import search_ir
from .templates import check_template

TOOLS_ONLY_PROMPTS = ("problem", "turn")


def text_of(value: A.Value) -> str:
    """A prompt's text; empty when the prompt was written as another kind of value (an E401)."""
    return value.value if isinstance(value, A.Str) else ""


def clean_action(action: dict) -> dict:
    return {k: v for k, v in action.items() if not k.startswith("_")}


DEFAULT_SEARCH_FORMAT_ERROR = (
    "Your reply could not be used: {{ error }}\n"
    "Reply again: first your plan in a few sentences of prose, then exactly one ```python code block "
    "holding the whole of {{ code_file }}.\n"
)


def lower_search_agent(decl: A.Agent, settings: dict, actions: list[dict], shown: set[str], set_ref: A.Ident,
                        report: Reporter) -> tuple[dict, dict, dict[str, str]] | None:
    """A tree-search agent: its policy, how a node is evaluated, and its operator prompts."""
    name = decl.name.value
    where = f"agent `{name}`"
    search = settings["search"]
    for entry in decl.entries:
        if isinstance(entry, (A.Respond, A.Prompt, A.DropSection)):
            report.error("E405", f"{where} searches a tree ({search['policy']}), so it runs no linear loop: "
                         f"`{entry.keyword}` would not be used", entry.span,
                         hint="a search agent's prompts are its operators: `prompts { draft ... improve ... "
                              "debug ... }`")
    if search["score"] is None:
        if search.get("_score_reported"):
            return None
        report.error("E308", f"{where} does not say how a node's validation score is read", search["_span"],
                     hint='add `score "Validation score: ([-+0-9.eE]+)"` (a pattern over the output) or `score review`')
        return None
    ir_search = search_ir(search)
    templates: dict[str, tuple[str, A.Value | None]] = {}
    fe = settings["format_error"]
    templates["format_error"] = (text_of(fe), fe) if fe is not None else (DEFAULT_SEARCH_FORMAT_ERROR, None)
    needed = list(ir_search["operators"]) + (["review"] if ir_search["score"]["from"] == "review" else [])
    own = {item.name.value for entry in decl.entries if isinstance(entry, A.Prompts) for item in entry.items}
    for key, value in settings["prompts"].items():
        if key in TOOLS_ONLY_PROMPTS:
            report.error("E605", f"{where} searches a tree, so it uses no `{key}` prompt", value.span)
            continue
        if key == "crossover" and key not in needed:  # a review prompt may wait for a `score review` variant
            if key not in own:  # inherited from an evolution agent: not this agent's mistake, just unused
                continue
            report.error("E605", f"{where} uses no `crossover` prompt: only the `evolution` policy crosses two "
                         f"parents, not `{search['policy']}`", value.span)
            continue
        templates[key] = (text_of(value), value)
    for prompt in needed:
        if prompt not in templates:
            report.error("E604", f"{where} has no `{prompt}` prompt, needed by its `{search['policy']}` search",
                         search["_span"],
                         hint=f"add it to a `prompts {{ {prompt} \"\"\"...\"\"\" }}` block (or inherit it)")
    texts: dict[str, str] = {}
    for key, (text, value) in templates.items():
        if isinstance(value, A.Str):
            check_template(text, value, key, report, where, kind="search")
        texts[f"{key}.j2"] = text if text.endswith("\n") else text + "\n"
    return artifacts(decl, settings, set_ref.value, actions, shown, texts, reply=None, search=ir_search)


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
