"""The run's limits as the agent loop applies them: steps (with a last chance to submit), tokens, cost."""
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
