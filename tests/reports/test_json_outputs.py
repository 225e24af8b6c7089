"""--json, the one spelling of machine-readable output: mlab run, eval, list, sweep --plan and mlabc check."""
from __future__ import annotations

import contextlib
import io
import json

from report_helpers import environment, mlab


def test_eval_json_is_every_row(run_of):
    code, out, err = mlab("eval", run_of("research-1"), "--json")
    assert code == 0, err
    (row,) = json.loads(out)["rows"]
    assert row["task"] == "tiny" and row["failure_labels"] == "small improvement" and "prompt_tokens_main" in row


def test_run_json_is_the_result_last_on_stdout(task_source, tmp_path):
    with environment(MLAB_CACHE=str(tmp_path / "cache"), SCIKIT_LEARN_DATA=str(tmp_path / "sklearn")):
        code, out, err = mlab("run", task_source, "--model", "mlab/demo", "--runs-dir", tmp_path / "runs",
                              "--plain", "--json")
    assert code in (0, 1), err
    result = json.loads(out)
    assert result["task"] == "tiny" and {"score", "success", "failure_mode"} <= set(result)
    assert "step" in err  # the progress lines went to stderr


def test_list_json():
    code, out, err = mlab("list", "--json")
    assert code == 0, err
    listing = json.loads(out)
    assert {"paper-table", "smoke"} <= set(listing["experiments"])
    tasks = {t["name"]: t for t in listing["tasks"]}
    assert len(tasks) == 13 and all(task["demonstration"] is True for task in tasks.values())
    assert {a["name"] for a in listing["agents"]} >= {"research", "react"}
    forms = {a["name"]: a["reply_format"] for a in listing["agents"]}
    assert forms["research-tools"] == "tools" and forms["tree-greedy"] == "search greedy"  # no reply format
    shown = {a["name"]: (a["actions_shown"], a["nodes_at_once"]) for a in listing["agents"]}
    assert shown["research"] == (9, None) and shown["tree-greedy"] == (None, 1)


def test_sweep_plan_shows_an_estimated_cost_and_honours_filters(tmp_path):
    code, out, err = mlab("sweep", "paper-table", "--plan", "--tasks", "house-price", "--agents", "research",
                          "--runs-dir", tmp_path, "--json")
    assert code == 0, err
    plan = json.loads(out)
    assert {r["task"] for r in plan["runs"]} == {"house-price"} and len(plan["runs"]) == 7 * 8
    priced = [r for r in plan["runs"] if r["estimated_cost_usd"] is not None]
    assert priced and plan["estimated_cost_usd"] > 0 and "estimate" in plan["cost_assumption"]
    code, out, err = mlab("sweep", "paper-table", "--plan", "--tasks", "house-price", "--runs-dir", tmp_path)
    assert code == 0 and "estimated cost: about $" in out and "prompt" in out
    code, out, err = mlab("sweep", "smoke", "--plan", "--tasks", "nosuch", "--runs-dir", tmp_path)
    assert code == 2 and "--tasks names nosuch: the experiment's tasks are house-price" in err


def test_mlabc_check_json_is_format_json():
    from mlabc.cli import main

    outputs = []
    for flag in (["--json"], ["--format", "json"]):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            main(["check", *flag, "tasks/experiments.mlab"])
        outputs.append(json.loads(out.getvalue()))
    assert outputs[0] == outputs[1] and outputs[0]["errors"] == 0
