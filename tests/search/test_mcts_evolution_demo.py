"""`mlab run house-price --agent tree-mcts|tree-evolution --model mlab/demo`: both std agents build a
tree from the demonstration's variants with no keys, submit a valid node and score it."""
from __future__ import annotations

import contextlib
import io
import json

from mlab.cli import main


def demo_run(tmp_path, agent: str) -> tuple[dict, list[dict]]:
    out, err = io.StringIO(), io.StringIO()
    runs = tmp_path / agent
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["run", "house-price", "--agent", agent, "--model", "mlab/demo", "--steps", "5",
                     "--runs-dir", str(runs)])
    assert code == 0, err.getvalue()
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    records = [json.loads(line) for line in (run_dir / "trace.jsonl").read_text().splitlines()]
    return json.loads((run_dir / "result.json").read_text()), [r for r in records if "node" in r]


def test_tree_mcts_and_tree_evolution_play_the_demonstration_and_score_the_best_valid_node(tmp_path):
    result, nodes = demo_run(tmp_path, "tree-mcts")
    # three drafts fill the root (children 3); then UCT walks to the best draft, the lowest error
    drafts = {r["node"]: r["validation"] for r in nodes if r["operator"] == "draft"}
    assert list(drafts) == [1, 2, 3] and len(set(drafts.values())) == 3
    best_draft = min(drafts, key=drafts.get)
    assert (nodes[3]["operator"], nodes[3]["parent"], nodes[3]["search"]["path"]) == ("improve", best_draft,
                                                                                      [best_draft])
    assert len(nodes) == 5 and result["search"]["policy"] == "mcts"
    best = min((r for r in nodes if not r["buggy"]), key=lambda r: r["validation"])
    assert result["search"]["submitted_node"] == best["node"] and result["success"] is True

    result, nodes = demo_run(tmp_path, "tree-evolution")
    # the seeds of generation 0, the two islands in turn (islands 2 x population 4 = 8 seeds)
    assert [(r["operator"], r["search"]["island"], r["search"]["generation"]) for r in nodes] == [
        ("draft", island, 0) for island in (0, 1, 0, 1, 0)]
    assert result["search"]["policy"] == "evolution" and result["search"]["valid_nodes"] == 5
    assert result["failure_mode"] is None and 0 < result["score"] < result["baseline"]["value"]
