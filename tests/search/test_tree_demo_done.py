"""The demo model's tree search stops when the demonstration has nothing new to offer: once every
draft and improvement variant has been given, a reply that could only repeat one ends the search
(end reason `demonstration_done`), the best node submitted, instead of node after node of
unchanged code (a 20-node demo tree took 4 min 50 s that way)."""
from __future__ import annotations

import pytest

from mlab.models.demonstration import Demonstration, Variant
from mlab.models.errors import DemonstrationDone
from mlab.models.offline import OfflineModels
from mlab.run.folder import Run
from mlab.search.engine import SearchEngine

from search_helpers import valid_code

VARIANTS = (Variant("draft: A constant.", {"train.py": valid_code(900.0, "first")}),
            Variant("improve: A better constant.", {"train.py": valid_code(500.0, "better")}))


def test_a_repeat_after_every_variant_was_given_ends_the_demonstration():
    model = OfflineModels(Demonstration((), None, VARIANTS)).model("mlab/demo")
    assert "first" in model.reply("main", "draft", "Draft.")
    assert "first" in model.reply("main", "draft", "Draft."), "a repeat while a variant is still unplayed"
    assert "better" in model.reply("main", "improve", f"Improve:\n{VARIANTS[0].files['train.py']}")
    with pytest.raises(DemonstrationDone, match="has played every variant of the demonstration"):
        model.reply("main", "improve", f"Improve:\n{VARIANTS[1].files['train.py']}")
    with pytest.raises(DemonstrationDone):
        model.reply("main", "draft", "Draft.")


def test_the_search_ends_when_the_demonstration_is_done_and_submits_its_best_node(
        house_task, search_agent, stand_in_sandbox, tmp_path):
    from mlab.models.client import ModelClient, TierConfig

    agent = search_agent()
    run = Run.create(house_task, agent, tmp_path / "runs", limits={"steps": 20})
    client = ModelClient({tier: TierConfig("mlab/demo") for tier in ("main", "fast", "edit")},
                         offline=OfflineModels(Demonstration((), None, VARIANTS)))
    outcome = SearchEngine(run, client, agent=agent).run_until_done()
    run.close()
    assert outcome.end_reason == "demonstration_done" and outcome.failure_mode is None
    assert outcome.search["nodes"] < 20
    assert outcome.search["submitted_validation"] == 500.0
