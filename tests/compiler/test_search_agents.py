"""Tree search in the language: the std search agents compile to the `search` IR of the contract
(every parameter filled in, the shared settings, the operators), their operator prompts render
with exactly the context spec/template-context.json gives them, and the policy tables agree
with the agent schema."""
from __future__ import annotations

import json
import re

import jinja2
import pytest
from jinja2 import meta

from mlabc.program.check import check_program
from mlabc.program.loader import load_program
from mlabc.lower.search import POLICIES
from mlabc.resources import std_dir

from mlabc_cases import REPO_ROOT

SPEC = json.loads((REPO_ROOT / "spec" / "template-context.json").read_text())["search_agent_templates"]
SCHEMA = json.loads((REPO_ROOT / "spec" / "agent.schema.json").read_text())
ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)


@pytest.fixture(scope="module")
def std():
    compiled = check_program(load_program([std_dir() / "agents.mlab", std_dir() / "experiments.mlab"]))
    assert compiled.ok, [d.message for d in compiled.diagnostics]
    return compiled


def test_tree_greedy_has_aides_published_defaults(std):
    agent = std.agents["tree-greedy"]
    assert agent.ir["search"] == {
        "policy": "greedy", "params": {"drafts": 5, "debug_probability": 0.5, "max_debug_depth": 3},
        "parallel": 1, "code_file": "train.py",
        "score": {"from": "pattern", "pattern": "Validation score: ([-+0-9.eE]+)", "group": 1},
        "select": "validation", "operators": ["draft", "improve", "debug"]}
    assert agent.ir["reply"] is None
    assert re.search(agent.ir["search"]["score"]["pattern"], "fold 2\nValidation score: 0.8125\n").group(1) == "0.8125"


def test_mcts_and_evolution_inherit_the_shared_settings_and_fill_in_every_parameter(std):
    mcts, evolution = std.agents["tree-mcts"].ir["search"], std.agents["tree-evolution"].ir["search"]
    assert mcts["params"] == {"exploration": 1.414, "children": 3, "max_debug_depth": 3, "steps": 20}
    assert evolution["params"] == {"population": 4, "islands": 2, "crossover_probability": 0.5,
                                   "migration_probability": 0.1, "temperature_start": 1.0, "temperature_end": 0.1,
                                   "generations": 3}
    assert evolution["operators"] == ["draft", "improve", "debug", "crossover"]
    assert "crossover" in std.agents["tree-evolution"].ir["templates"]
    assert "crossover" not in std.agents["tree-mcts"].ir["templates"]
    for search in (mcts, evolution):
        assert (search["code_file"], search["score"]["from"], search["select"]) == ("train.py", "pattern", "validation")


def test_the_policy_tables_are_the_schemas_parameters():
    branches = {b["if"]["properties"]["policy"]["const"]: b["then"]["properties"]["params"]
                for b in SCHEMA["$defs"]["search"]["allOf"]}
    for policy, table in POLICIES.items():
        assert sorted(branches[policy]["required"]) == sorted(table)


def _node(validation=0.75, buggy=False):
    return {"plan": "Fit a forest.", "code": "print('Validation score: 0.75')", "output": "Validation score: 0.75",
            "validation": validation, "buggy": buggy}


def _context(template: str) -> dict:
    task = {"name": "t", "title": "T", "problem": "Predict y.", "submission_file": "submission.csv",
            "submission_columns": ["id", "y"], "metric": "accuracy", "direction": "higher_is_better"}
    values = {"task": task, "parent": None if template == "draft" else _node(), "parents": [_node(), _node(0.7)],
              "journal": "1. 0.75: a forest", "data_preview": "train.csv: 8693 rows", "code_file": "train.py",
              "node": 4, "max_nodes": 20, "code": "print(1)", "output": "1", "error": "no code block"}
    return {key: values[key] for key in SPEC[template]}


@pytest.mark.parametrize("template", ["draft", "improve", "debug", "crossover", "review", "format_error"])
def test_the_operator_prompts_render_with_their_own_context(std, template):
    text = std.agents["tree-evolution"].templates[f"{template}.j2"]
    assert meta.find_undeclared_variables(ENV.parse(text)) <= set(SPEC[template])
    rendered = ENV.from_string(text).render(**_context(template))
    if template in ("draft", "improve", "debug", "crossover"):
        assert "```python" in rendered and "train.py" in rendered
        assert "Validation score: N" in rendered or template == "crossover" and "Validation score" in rendered


def test_the_linear_versus_tree_experiment_runs_the_five_agents_on_the_same_seeds(std):
    ir, _ = std.experiments["linear-vs-tree"]
    assert ir["agents"] == ["research", "research-tools", "tree-greedy", "tree-mcts", "tree-evolution"]
    assert ir["tasks"] == {"all": True} and ir["runs"] == 8 and ir["overrides"] == {}
