"""The run's limits as the agent loop applies them: steps (with a last chance to submit), tokens, cost."""
import json

from agent_helpers import mlab, only_run, research_reply, result, scripted, trace

LOOK = research_reply("List Files", {"dir_path": "."})


def test_the_step_limit_gives_one_last_chance_then_ends_the_run(tiny_task, tmp_path):
    code, out, _ = mlab("run", tiny_task, "--model", scripted(tmp_path, [LOOK] * 5), "--steps", "2",
                        "--runs-dir", tmp_path / "runs")
    assert code == 1
    run_dir = only_run(tmp_path / "runs")
    assert [r["status"] for r in trace(run_dir)] == ["ok", "ok", "shutdown", "shutdown"]
    document = result(run_dir)
    assert (document["end_reason"], document["failure_mode"], document["steps"]) == ("steps_limit", "limit reached", 2)
    assert "no success (limit reached)" in out
    # the wind-down after the limit is shown without step numbers past it
    lines = [line.split() for line in out.splitlines() if line.startswith(("step ", "at limit"))]
    assert [line[:3] for line in lines] == [["step", "1", "List"], ["step", "2", "List"], ["at", "limit", "List"],
                                           ["at", "limit", "List"]]
    assert out.count("[not run: limit reached]") == 2 and "step   3" not in out and "[shutdown]" not in out
    # ... and so in the viewer: headings and the step navigation's labels
    from mlab.reports.runs import load_run
    from mlab.viewer.page import render_run

    page = render_run(load_run(run_dir))
    assert "<h2>Step 1 · List Files" in page and "<h2>Step 2 · List Files" in page
    assert "<h2>Step 3" not in page and "<h2>Step 4" not in page and page.count("<h2>At limit · List Files") == 2
    assert page.count("data-label='at limit'") == 2 and ">not run: limit reached<" in page
    # ... and in eval's table (the steps within the limit)
    code, out, _ = mlab("eval", run_dir, "--json")
    assert code == 0 and [row["steps"] for row in json.loads(out)["rows"]] == [2]


def test_a_final_answer_at_the_last_chance_is_not_counted_as_a_step_past_the_limit(tiny_task, tmp_path):
    final = research_reply("Final Answer", {"final_answer": "done"})
    code, out, _ = mlab("run", tiny_task, "--model", scripted(tmp_path, [LOOK, LOOK, LOOK, final]), "--steps", "2",
                        "--runs-dir", tmp_path / "runs")
    run_dir = only_run(tmp_path / "runs")
    assert [r["status"] for r in trace(run_dir)] == ["ok", "ok", "shutdown", "final"]
    assert result(run_dir)["steps"] == 2 and "\nsteps 2," in out
    assert [line.split()[:2] for line in out.splitlines() if line.startswith("at limit")] == [["at", "limit"]] * 2


def test_mlab_drive_shows_the_wind_down_without_step_numbers_past_the_limit(tiny_task, tmp_path):
    actions = tmp_path / "actions.json"
    actions.write_text(json.dumps([{"action": "List Files", "input": {"dir_path": "."}}] * 4))
    code, out, _ = mlab("drive", tiny_task, "--actions", actions, "--steps", "2", "--runs-dir", tmp_path / "runs")
    assert code == 0
    heads = [line for line in out.splitlines() if line.startswith("--- ")]
    assert heads == ["--- step 1: List Files [ok]", "--- step 2: List Files [ok]"] + \
        ["--- at limit: List Files [not run: limit reached]"] * 2
    assert "ended after 2 steps (steps_limit)" in out


def test_the_token_limit_ends_the_run_before_the_next_call(tiny_task, tmp_path):
    code, _, _ = mlab("run", tiny_task, "--model", scripted(tmp_path, [LOOK] * 5), "--tokens", "1000",
                      "--runs-dir", tmp_path / "runs")
    assert code == 1
    run_dir = only_run(tmp_path / "runs")
    records = trace(run_dir)
    assert [r["action"] for r in records] == ["List Files", None]
    assert records[-1]["end_reason"] == "tokens_limit"
    document = result(run_dir)
    assert document["failure_mode"] == "limit reached" and document["total_tokens"] >= 1000
    assert document["model_calls"] == 1 and document["steps"] == 1


def test_a_helper_action_stops_when_the_run_s_tokens_are_spent_and_the_run_ends_with_the_limit(tiny_task, tmp_path):
    make = "open('big.txt', 'w').write(''.join(f'line {i}: ' + 'z' * 90 + '\\n' for i in range(4000)))\n"
    replies = [research_reply("Write File", {"file_name": "make.py", "content": make}),  # 40 chunks of 10,000
               research_reply("Execute Script", {"script_name": "make.py"}),
               research_reply("Understand File", {"file_name": "big.txt", "things_to_look_for": "the last line"}),
               *["PART: nothing yet."] * 41, research_reply("Final Answer", {"final_answer": "done"})]
    code, out, err = mlab("run", tiny_task, "--model", scripted(tmp_path, replies), "--tokens", "20000",
                          "--runs-dir", tmp_path / "runs")
    assert code == 1, err
    run_dir = only_run(tmp_path / "runs")
    records = trace(run_dir)
    assert [r["action"] for r in records] == ["Write File", "Execute Script", "Understand File", None]
    understood = records[2]
    helper = [c for c in understood["model"]["calls"] if c["purpose"] == "understand_file"]
    assert 3 <= len(helper) <= 8  # each chunk is about 2,700 tokens: the budget held after a few, not 40
    assert understood["status"] == "error"
    assert understood["observation"].startswith("the action stopped: the run's tokens limit was reached")
    document = result(run_dir)
    assert (document["end_reason"], document["failure_mode"]) == ("tokens_limit", "limit reached")
    spent = document["total_tokens"]
    assert 20000 <= spent < 20000 + 4000  # at most one call past the limit
    assert document["model_calls"] == 3 + len(helper)


def test_every_call_of_a_client_is_checked_against_its_budget_and_charged_as_it_is_made(tmp_path):
    import pytest

    from mlab.models.client import ModelClient, TierConfig
    from mlab.models.errors import BudgetSpent
    from mlab.models.usage import Budget

    client = ModelClient({"fast": TierConfig(scripted(tmp_path, ["one two three"] * 3))})
    client.budget = Budget(tokens=30)
    client.complete("fast", "a short prompt", purpose="summarize_observation")
    spent = client.budget.spent.total_tokens
    assert 0 < spent < 30
    client.budget.tokens = spent  # the next call would go past the limit: it is not made
    with pytest.raises(BudgetSpent) as raised:
        client.chat("fast", [{"role": "user", "content": "hi"}], purpose="review")
    assert (raised.value.end_reason, str(raised.value)) == ("tokens_limit", "the run's tokens limit was reached")
    assert client.budget.spent.calls == 1


def test_the_calls_limit_counts_helper_calls_and_stops_an_action_mid_way(tiny_task, tmp_path):
    """`--calls N` caps model calls of every kind: here 3 steps and 2 of Understand File's chunk calls."""
    make = "open('big.txt', 'w').write(''.join(f'line {i}: ' + 'z' * 90 + '\\n' for i in range(4000)))\n"
    replies = [research_reply("Write File", {"file_name": "make.py", "content": make}),
               research_reply("Execute Script", {"script_name": "make.py"}),
               research_reply("Understand File", {"file_name": "big.txt", "things_to_look_for": "the last line"}),
               *["PART: nothing yet."] * 41, research_reply("Final Answer", {"final_answer": "done"})]
    code, _, err = mlab("run", tiny_task, "--model", scripted(tmp_path, replies), "--calls", "5",
                        "--runs-dir", tmp_path / "runs")
    assert code == 1, err
    run_dir = only_run(tmp_path / "runs")
    records = trace(run_dir)
    assert [r["action"] for r in records][:3] == ["Write File", "Execute Script", "Understand File"]
    assert records[2]["observation"].startswith("the action stopped: the run's calls limit was reached")
    document = result(run_dir)
    assert (document["end_reason"], document["failure_mode"], document["model_calls"]) == \
        ("calls_limit", "limit reached", 5)


def test_a_calls_limit_below_one_is_a_usage_error(tiny_task, tmp_path):
    code, _, err = mlab("run", tiny_task, "--model", "mlab/demo", "--calls", "0", "--runs-dir", tmp_path / "runs")
    assert code == 2 and "calls" in err
