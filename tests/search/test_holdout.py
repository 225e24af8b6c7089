"""Selection on the harness's holdout: the agent's own validation claim is not trusted; the best few
valid nodes are compared on validation rows the harness held out of the training data."""
from __future__ import annotations

import pytest

from mlab.errors import MlabError
from mlab.run.folder import Run
from mlab.search.engine import SearchEngine

from search_helpers import reply


def predicting(value: float, claimed: float) -> str:
    """Predicts one constant price for the test and validation rows; claims a validation error."""
    return ("import csv\n"
            "for source, target in (('test.csv', 'submission.csv'), ('validation.csv', 'validation_submission.csv')):\n"
            "    ids = [row['Id'] for row in csv.DictReader(open(source))]\n"
            "    with open(target, 'w') as out:\n"
            f"        out.write('Id,SalePrice\\n' + ''.join(f'{{i}},{value}\\n' for i in ids))\n"
            f"print('validation mae: {claimed}')\n")


@pytest.fixture
def task_with_validation_split(tmp_path, monkeypatch, tmp_path_factory):
    from mlabc.api import compile_paths
    from runtime_helpers import copy_task_sources

    from mlab.build import load_build

    source = copy_task_sources(tmp_path / "src")
    text = source.read_text()
    source.write_text(text.replace('split   random 0.2 seed 42\n    id      "Id"',
                                   'split   random 0.2 seed 42\n    validation 0.2\n    id      "Id"', 1))
    compiled, manifest = compile_paths([str(source)], tmp_path / "build")
    assert manifest is not None, compiled.diagnostics
    monkeypatch.setenv("MLAB_CACHE", str(tmp_path_factory.getbasetemp() / "mlab-cache"))
    return load_build(tmp_path / "build").task("house-price")


def test_the_holdout_overrules_a_gamed_validation_score(task_with_validation_split, search_agent, scripted,
                                                        stand_in_sandbox, tmp_path):
    research = search_agent(select="holdout")
    task = task_with_validation_split
    agent = type(research)(research.name, research.view, task.build.agent("research").actions, research.templates,
                           task.build)
    run = Run.create(task, agent, tmp_path / "runs", limits={"steps": 2})
    client = scripted([reply("Claims a tiny error.", predicting(1.0, 10.0)),
                       reply("Honest median.", predicting(160000.0, 30000.0))])
    outcome = SearchEngine(run, client, agent=agent).run_until_done()
    run.close()
    nodes = {r["node"]: r for r in run.records if "node" in r}
    assert nodes[1]["holdout"] > 150000 > 60000 > nodes[2]["holdout"]  # MAE of each constant on the held-out rows
    assert outcome.search["selected_by"] == "holdout" and outcome.search["submitted_node"] == 2
    assert outcome.search["submitted_validation"] == 30000.0


def test_holdout_selection_needs_a_validation_split(house_task, search_agent, scripted, tmp_path):
    agent = search_agent(select="holdout")
    run = Run.create(house_task, agent, tmp_path / "runs", limits={"steps": 2})
    try:
        with pytest.raises(MlabError, match="holds out no validation split; declare one"):
            SearchEngine(run, scripted([]), agent=agent)
    finally:
        run.close()
