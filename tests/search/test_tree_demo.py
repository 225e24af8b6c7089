"""`mlab/demo` plays tree-search agents from the task's demonstration variants (runtime/mlab/models/tree_demo.py)."""
from __future__ import annotations

import contextlib
import importlib.util
import io
import json
from pathlib import Path

import pytest

from mlab.models.demonstration import Demonstration, Variant, load
from mlab.models.errors import DemonstrationDone, RepliesExhausted
from mlab.models.offline import OfflineModels
from mlab.search.operators import REVIEW_TOOL, parse_operator_reply, parse_review, review_fields

REPO = Path(__file__).resolve().parents[2]
HOUSE = REPO / "tasks" / "house-price"


def tree_scripts(task: str) -> dict[str, str]:
    """The task's tree-search scripts (name → code), made from its templates in solution/tree/ by
    tasks/make_variants.py, the generator of the demonstration's variants."""
    spec = importlib.util.spec_from_file_location("make_variants", REPO / "tasks" / "make_variants.py")
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    return generator.scripts(task)


@pytest.fixture(scope="module")
def house_demo() -> Demonstration:
    return load(HOUSE / "demo.json")


def demo_model(demonstration):
    return OfflineModels(demonstration).model("mlab/demo")


def code_of(reply: str) -> str:
    return parse_operator_reply(reply)[1]


def variant_named(demonstration, script: str) -> str:
    """The code of the variant made from tasks/house-price/solution/tree/SCRIPT.j2."""
    code = tree_scripts("house-price")[script]
    assert code in [v.files["train.py"] for v in demonstration.variants]
    return code


@pytest.mark.parametrize("task, operators", [
    ("house-price", ["draft", "draft", "draft", "improve", "debug", "improve"]),
    ("spaceship-titanic", ["draft", "draft", "improve", "improve", "debug"]),
    ("imdb", ["draft", "draft", "improve", "improve", "debug"])])
def test_the_variants_are_the_generated_scripts_with_their_operators(task, operators):
    demonstration = load(REPO / "tasks" / task / "demo.json")
    scripts = set(tree_scripts(task).values())
    assert [set(v.files) for v in demonstration.variants] == [{"train.py"}] * len(operators)
    assert {v.files["train.py"] for v in demonstration.variants} == scripts
    assert [v.description.split(":")[0] for v in demonstration.variants] == operators
    for variant in demonstration.variants:
        assert 'print(f"Validation score: {' in variant.files["train.py"], variant.description
        assert 'to_csv("submission.csv", index=False)' in variant.files["train.py"]


def test_drafts_come_in_turn_and_every_reply_is_one_plan_and_one_code_block(house_demo):
    model = demo_model(house_demo)
    replies = [model.reply("main", "draft", "Draft a solution.") for _ in range(5)]
    codes = [code_of(reply) for reply in replies]
    assert codes[:3] == [variant_named(house_demo, name) for name in
                         ("draft_forest.py", "draft_ridge.py", "draft_boosting.py")]
    assert codes[3:] == codes[:2]  # then again from the first
    plan = parse_operator_reply(replies[1])[0]
    assert plan.startswith("Fit a ridge regression on log(SalePrice)") and "(demonstration:" in plan


def test_a_resumed_run_drafts_what_the_journal_does_not_show_yet(house_demo):
    model = demo_model(house_demo)  # a fresh model, as after `mlab run --resume`
    made = [model.reply("main", "draft", "Draft.") for _ in range(2)]
    journal = "Solutions tried so far:\n" + "\n".join(f"Node {i + 1} (draft): Plan: {parse_operator_reply(r)[0]}"
                                                      for i, r in enumerate(made))
    resumed = demo_model(house_demo)
    assert code_of(resumed.reply("main", "draft", journal)) == variant_named(house_demo, "draft_boosting.py")


def test_improve_and_debug_follow_the_parent_shown_in_the_prompt(house_demo):
    model = demo_model(house_demo)
    boosting, buggy, fixed, best = (variant_named(house_demo, name) for name in (
        "draft_boosting.py", "improve_categoricals.py", "debug_categoricals.py", "improve_features.py"))
    assert code_of(model.reply("main", "improve", f"Improve this script:\n{boosting}\nIt scored 16222.")) == buggy
    debug_prompt = f"It failed:\n{buggy}\nTraceback (most recent call last):\nKeyError: 'TotalBsmtSf'"
    assert code_of(model.reply("main", "debug", debug_prompt)) == fixed
    assert code_of(model.reply("main", "improve", f"Improve:\n{fixed}")) == best
    assert code_of(model.reply("main", "improve", f"Improve this one again:\n{boosting}")) == best
    # nothing is listed after the best improvement: it is run again unchanged, said so in the plan
    plan, code = parse_operator_reply(model.reply("main", "improve", f"Improve:\n{best}"))
    assert code == best and plan.startswith("The demonstration has no further change prepared")
    # a debug of code the demonstration does not know falls back to the reference solution
    assert code_of(model.reply("main", "debug", "print(undefined_name)")) == \
        (HOUSE / "solution" / "train_improved.py").read_text(encoding="utf-8")
    crossed = code_of(model.reply("main", "crossover", "Combine the two parents."))
    assert crossed in (buggy, best)


def test_a_review_reads_the_score_or_the_failure_from_the_output(house_demo):
    model = demo_model(house_demo)
    code = 'print(f"Validation score: {mae:.1f}")\n'
    ran = parse_review(model.reply("fast", "review", f"Code:\n{code}\nOutput:\nValidation score: 14632.0\n"))
    assert ran == {"is_bug": False, "metric": 14632.0,
                   "summary": "(demo review) the script ran and printed a validation score of 14632."}
    failed = parse_review(model.reply("fast", "review", f"Code:\n{code}\nOutput:\nTraceback (most recent call "
                                                        "last):\n  File \"train.py\"\nKeyError: 'TotalBsmtSf'\n"))
    assert failed["is_bug"] is True and failed["metric"] is None and "KeyError: 'TotalBsmtSf'" in failed["summary"]
    silent = parse_review(model.reply("fast", "review", f"Code:\n{code}\nOutput:\ndone\n"))
    assert silent["is_bug"] is True and silent["metric"] is None


def test_a_review_asked_with_the_review_tool_comes_as_its_call(house_demo):
    message = demo_model(house_demo).reply_message(
        "fast", "review", [{"role": "user", "content": "Output:\nValidation score: 16222.2\n"}], [REVIEW_TOOL])
    (call,) = message["tool_calls"]
    assert call["name"] == REVIEW_TOOL["function"]["name"]
    assert review_fields(call["arguments"])["metric"] == 16222.2


def test_a_demonstration_without_variants_says_so(house_demo):
    bare = Demonstration(house_demo.steps, house_demo.solution)
    for demonstration in (bare, None):
        with pytest.raises(RepliesExhausted, match="the task's demonstration has no variants"):
            demo_model(demonstration).reply("main", "draft", "Draft a solution.")
    # a linear agent's steps still play
    assert demo_model(bare).reply("main", "step", "Go.").startswith("Reflection:")


def test_variants_that_name_no_operator_are_drafts():
    variants = (Variant("A plain solution.", {"train.py": "print('Validation score: 1')\n"}),
                Variant("Another.", {"train.py": "print('Validation score: 2')\n"}))
    model = demo_model(Demonstration((), None, variants))
    codes = [code_of(model.reply("main", purpose, "x")) for purpose in ("draft", "draft")]
    assert codes == ["print('Validation score: 1')\n", "print('Validation score: 2')\n"]
    # both variants given: anything more would repeat one, so the demonstration is done
    for purpose in ("improve", "debug", "draft"):
        with pytest.raises(DemonstrationDone):
            model.reply("main", purpose, "x")


def test_mlab_run_plays_tree_greedy_from_the_demonstration_and_submits_the_best_valid_node(tmp_path):
    """`mlab run house-price --agent tree-greedy --model mlab/demo`, no keys: five drafts (three
    distinct), an improvement of the best that fails, the best valid draft submitted and scored."""
    from mlab.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["run", "house-price", "--agent", "tree-greedy", "--model", "mlab/demo", "--steps", "6",
                     "--runs-dir", str(tmp_path)])
    assert code == 0, err.getvalue()
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    result = json.loads((run_dir / "result.json").read_text())
    records = [json.loads(line) for line in (run_dir / "trace.jsonl").read_text().splitlines()]
    nodes = [r for r in records if "node" in r]
    assert [(r["node"], r["parent"], r["operator"], r["buggy"]) for r in nodes] == [
        (1, None, "draft", False), (2, None, "draft", False), (3, None, "draft", False),
        (4, None, "draft", False), (5, None, "draft", False), (6, 3, "improve", True)]
    assert len({r["validation"] for r in nodes if r["operator"] == "draft"}) == 3
    best = min((r for r in nodes if not r["buggy"]), key=lambda r: r["validation"])
    assert result["search"] == {"policy": "greedy", "nodes": 6, "valid_nodes": 5, "buggy_nodes": 1,
                                "submitted_node": best["node"], "submitted_validation": best["validation"],
                                "selected_by": "validation"}
    assert "KeyError: 'TotalBsmtSf'" in nodes[5]["observation"]
    assert result["demo"] is True and result["failure_mode"] is None and result["end_reason"] == "steps_limit"
    assert 0 < result["score"] < result["baseline"]["value"] and result["success"] is True
    # the run's final workspace is the submitted node's: the gradient-boosting draft
    assert (run_dir / "workspace" / "train.py").read_text() == \
        tree_scripts("house-price")["draft_boosting.py"]
    assert "DEMONSTRATION by the keyless demo model — not an agent result" in out.getvalue()
