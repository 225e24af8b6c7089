"""`search POLICY { ... }`: a tree-search policy instead of the linear agent loop.

Every policy has a table of typed, range-checked parameters with their defaults (where they come
from is said beside each), so that no value is left to run time; the settings every policy shares
(how many nodes are evaluated at once, where the code goes, how the validation score is read, how
the final node is chosen) come after.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from .. import ast as A
from ..values import Reporter, describe, did_you_mean
from .templates import TOOLS_ONLY_PROMPTS, check_template, text_of


@dataclass(frozen=True)
class Param:
    type: str  # count (int >= 1), probability (number in [0, 1]), positive (number > 0), non-negative
    default: int | float
    meaning: str


POLICIES: dict[str, dict[str, Param]] = {
    # AIDE (Jiang et al. 2025, "AIDE: AI-Driven Exploration in the Space of Code"): its published
    # defaults are 5 initial drafts, debug probability 0.5 and a maximum debug depth of 3.
    "greedy": {
        "drafts": Param("count", 5, "drafts written from scratch before the search improves on the best node"),
        "debug_probability": Param("probability", 0.5, "the chance of debugging a buggy leaf instead of "
                                                       "improving the best node"),
        "max_debug_depth": Param("count", 3, "debug operators in a row after which a buggy branch is left"),
    },
    # UCT (Kocsis and Szepesvari 2006): sqrt(2) is the textbook exploration constant for rewards in [0, 1];
    # the other defaults follow aira-dojo's MCTS configuration in spirit (a few children, a step budget).
    "mcts": {
        "exploration": Param("non-negative", 1.414, "the UCT exploration constant c"),
        "children": Param("count", 3, "children made when a node is expanded"),
        "max_debug_depth": Param("count", 3, "debug operators in a row after which a buggy branch is left"),
        "steps": Param("count", 20, "selection-expansion-backup iterations"),
    },
    # Island-model evolution as in FunSearch/AlphaEvolve-style scaffolds: small islands, crossover and
    # migration probabilities, a selection temperature annealed from start to end over the generations.
    "evolution": {
        "population": Param("count", 4, "nodes per island in each generation"),
        "islands": Param("count", 2, "populations that evolve apart"),
        "crossover_probability": Param("probability", 0.5, "the chance that a child is a crossover of two "
                                                           "parents rather than an improvement of one"),
        "migration_probability": Param("probability", 0.1, "the chance, per generation, that an island's best "
                                                           "node joins another island"),
        "temperature_start": Param("positive", 1.0, "the selection temperature of the first generation"),
        "temperature_end": Param("positive", 0.1, "the selection temperature of the last generation"),
        "generations": Param("count", 3, "generations evolved"),
    },
}

OPERATORS = {"greedy": ["draft", "improve", "debug"], "mcts": ["draft", "improve", "debug"],
             "evolution": ["draft", "improve", "debug", "crossover"]}
SEARCH_PROMPTS = ("draft", "improve", "debug", "crossover", "review")

# The settings every policy shares: name -> (meaning, default).
COMMON = {
    "parallel": ("node evaluations at once", 1),
    "code_file": ("the workspace file a node's code is written to", "train.py"),
    "score": ("how the validation score is read: a regular expression over the script's output whose "
              "first group captures it, or `review` (the fast model reads the output)", None),
    "select": ("the final choice: `validation` (the agent's own score) or `holdout` (a split the harness "
               "holds out)", "validation"),
}
SELECT = ("validation", "holdout")


def empty_search() -> dict:
    return {"policy": None, "params": {}, "parallel": 1, "code_file": "train.py", "score": None,
            "select": "validation", "_span": None}


def lower_search(entry: A.Search, inherited: dict | None, report: Reporter) -> dict | None:
    """The search settings of an agent: the block over what the parent's search block set. The shared
    settings are inherited; the policy's parameters start from the policy's defaults when the
    policy changes."""
    policy = entry.policy.value
    if policy not in POLICIES:
        report.error("E405", f"a search policy cannot be `{policy}`", entry.policy.span,
                     did_you_mean(policy, POLICIES, "policies"))
        return None
    out = dict(inherited) if inherited else empty_search()
    table = POLICIES[policy]
    params = {k: v for k, v in out["params"].items() if k in table} if out["policy"] == policy else {}
    params = {**{k: p.default for k, p in table.items()}, **params}
    out.update(policy=policy, params=params, _span=entry.span)
    seen: set[str] = set()
    for item in entry.items:
        key = item.key.value
        if key in seen:
            report.error("E302", f"`{key}` is given twice in `search {policy}`", item.key.span)
        seen.add(key)
        if key in table:
            value = _param(item.value, table[key], f"`{key}`", report)
            if value is not None:
                params[key] = value
        elif key in COMMON:
            _common(key, item.value, out, report)
        else:
            owners = sorted(p for p, t in POLICIES.items() if key in t)
            if owners:
                hint = (f"`{key}` is a parameter of `{'` and `'.join(owners)}`; `{policy}` takes: "
                        + ", ".join([*table, *COMMON]))
            else:
                hint = did_you_mean(key, [*table, *COMMON], "parameters")
            report.error("E403", f"search policy `{policy}` has no parameter `{key}`", item.key.span, hint)
    if policy == "evolution" and params["temperature_end"] > params["temperature_start"]:
        where = next((i.value.span for i in entry.items if i.key.value == "temperature_end"), entry.policy.span)
        report.error("E405", f"`temperature_end` ({params['temperature_end']:g}) is above `temperature_start` "
                     f"({params['temperature_start']:g})", where,
                     hint="the selection temperature is annealed from start down to end")
    return out


def _param(value: A.Value, param: Param, where: str, report: Reporter):
    if param.type == "count":
        return report.integer(value, where, minimum=1)
    if isinstance(value, A.Percent) and param.type == "probability":
        number = value.fraction
    elif isinstance(value, (A.Int, A.Float)):
        number = float(value.value)
    else:
        expected = "a probability (0.5 or 50%)" if param.type == "probability" else "a number"
        report.error("E401", f"{where} takes {expected}, not {describe(value)}", value.span)
        return None
    if param.type == "probability" and not 0 <= number <= 1:
        report.error("E405", f"{where} is a probability: it must be between 0 and 1, not {number:g}", value.span)
        return None
    if param.type == "positive" and number <= 0:
        report.error("E405", f"{where} must be above 0, not {number:g}", value.span)
        return None
    if param.type == "non-negative" and number < 0:
        report.error("E405", f"{where} must be at least 0, not {number:g}", value.span)
        return None
    return number


def _common(key: str, value: A.Value, out: dict, report: Reporter) -> None:
    if key == "parallel":
        number = report.integer(value, "`parallel`", minimum=1)
        if number is not None:
            out["parallel"] = number
    elif key == "code_file":
        path = report.string(value, "`code_file`")
        if path is None:
            return
        pure = PurePosixPath(path)
        if not path.strip() or pure.is_absolute() or ".." in pure.parts or "\\" in path:
            report.error("E405", f"`code_file` must be a path inside the workspace, not {path!r}", value.span)
        elif pure.suffix != ".py":
            report.error("E405", f"`code_file` must be a Python file (a node's code is one ```python block), "
                         f"not {path!r}", value.span, hint='e.g. `code_file "train.py"`')
        else:
            out["code_file"] = pure.as_posix()
    elif key == "score":
        if isinstance(value, A.Name) and value.value == "review":
            out["score"] = {"from": "review"}
            return
        if not isinstance(value, A.Str):
            report.error("E401", f"`score` takes a regular expression (a string) or `review`, not {describe(value)}",
                         value.span)
            return
        try:
            compiled = re.compile(value.value)
        except re.error as error:
            report.error("E801", f"the score pattern does not compile: {error}", value.span,
                         hint='a Python regular expression, e.g. "Validation score: ([-+0-9.eE]+)"')
            out["_score_reported"] = True
            return
        if compiled.groups < 1:
            report.error("E802", "the score pattern captures nothing: its first group must hold the score",
                         value.span, hint='put the part that matches the number in parentheses, e.g. '
                                          '"Validation score: ([-+0-9.eE]+)"')
            out["_score_reported"] = True
            return
        out["score"] = {"from": "pattern", "pattern": value.value, "group": 1}
    elif key == "select":
        word = value.value if isinstance(value, A.Name) else None
        if word not in SELECT:
            report.error("E405", f"`select` cannot be {describe(value)}", value.span, did_you_mean(str(word), SELECT))
        else:
            out["select"] = word


def search_ir(search: dict) -> dict:
    return {"policy": search["policy"], "params": dict(search["params"]), "parallel": search["parallel"],
            "code_file": search["code_file"], "score": search["score"], "select": search["select"],
            "operators": list(OPERATORS[search["policy"]])}


DEFAULT_SEARCH_FORMAT_ERROR = (
    "Your reply could not be used: {{ error }}\n"
    "Reply again: first your plan in a few sentences of prose, then exactly one ```python code block "
    "holding the whole of {{ code_file }}.\n"
)


def lower_search_agent(decl: A.Agent, settings: dict, report: Reporter) -> tuple[dict[str, str], dict] | None:
    """A tree-search agent's templates (name → text: its operator prompts and format error) and the
    IR of its search (its policy, how a node is evaluated), or None when it cannot run."""
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
    return texts, ir_search
