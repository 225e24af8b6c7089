"""`mlab run` against a fake OpenAI-compatible server (litellm's `openai/` provider with --api-base):
usage and cost from the server's replies, retries on 429/500, and a failing server ending the run."""
import pytest

from agent_helpers import mlab, only_run, research_reply, result, trace, trace_problems
from fake_openai import FakeOpenAI

MODEL = "openai/gpt-4-turbo"
REPLIES = [research_reply("Execute Script", {"script_name": "fit.py"}),
           research_reply("Final Answer", {"final_answer": "fitted y = 2x + 1"})]


@pytest.fixture
def quick_retries(monkeypatch):
    """Small time-outs and no waiting between attempts, so failures come fast."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("MLAB_MODEL_BACKOFF", "0")
    monkeypatch.setenv("MLAB_MODEL_TIMEOUT", "1")
    monkeypatch.setenv("MLAB_MODEL_ATTEMPTS", "3")


def run_against(server, tiny_task, folder, *extra):
    code, out, err = mlab("run", tiny_task, "--model", MODEL, "--api-base", server.base, "--runs-dir", folder, *extra)
    return code, out, err, only_run(folder)


def test_a_run_through_the_server_records_usage_and_cost(quick_retries, tiny_task, tmp_path):
    with FakeOpenAI(REPLIES, usage=(1000, 100), cached=600) as server:
        code, out, err, run_dir = run_against(server, tiny_task, tmp_path, "--seed", "7")
    assert code == 0, err
    request = server.requests[0]
    assert request["model"] == "gpt-4-turbo" and request["seed"] == 7
    assert (request["temperature"], request["max_tokens"], request["stop"]) == (0.5, 4000, ["Observation:"])
    assert isinstance(request["messages"][0]["content"], str)  # no cache marks for OpenAI
    calls = [c for r in trace(run_dir) for c in r["model"]["calls"]]
    assert [(c["prompt_tokens"], c["completion_tokens"], c["usage_reported"]) for c in calls] == [(1000, 100, True)] * 2
    document = result(run_dir)
    assert document["tokens"]["main"] == {"prompt": 2000, "completion": 200, "cached": 1200}
    assert document["cost"] == pytest.approx(sum(c["cost"] for c in calls)) and document["cost"] > 0
    assert document["models"]["fast"]["model"] == MODEL  # helper tiers stay on the server
    assert document["provenance"]["api_base"] == server.base and document["success"] is True
    assert f"cost ${document['cost']:.4f}" in out
    assert trace_problems(run_dir) == []


def test_rate_limits_and_server_errors_are_retried(quick_retries, tiny_task, tmp_path):
    with FakeOpenAI(REPLIES, faults=[429, 500]) as server:
        code, _, err, run_dir = run_against(server, tiny_task, tmp_path)
    assert code == 0, err
    first, second = (r["model"]["calls"][0] for r in trace(run_dir))
    assert (first["attempts"], second["attempts"]) == (3, 1)
    assert len(server.requests) == 4
    assert result(run_dir)["end_reason"] == "final_answer"


@pytest.mark.parametrize("faults", [[500] * 5, ["hang", 503, "hang"]], ids=["server-errors", "time-outs"])
def test_a_server_that_keeps_failing_ends_the_run_with_a_model_api_failure(quick_retries, tiny_task, tmp_path,
                                                                            faults):
    with FakeOpenAI(REPLIES, faults=faults) as server:
        code, out, _, run_dir = run_against(server, tiny_task, tmp_path)
    assert code == 1
    assert len(server.requests) == 3
    [record] = trace(run_dir)
    assert record["end_reason"] == "model API failure" and record["action"] is None
    document = result(run_dir)
    assert document["failure_mode"] == "model API failure" and document["score"] is None
    assert f"{MODEL} at {server.base} failed after 3 attempt(s)" in document["detail"]
    assert "no success (model API failure)" in out
    assert trace_problems(run_dir) == []


def test_an_openai_model_at_an_api_base_needs_some_key(tiny_task, tmp_path):
    code, out, err = mlab("run", tiny_task, "--model", MODEL, "--api-base", "http://127.0.0.1:9/v1",
                          "--runs-dir", tmp_path / "runs")
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [f"mlab: the main, fast and edit tiers' model {MODEL} at http://127.0.0.1:9/v1 "
                                        "needs OPENAI_API_KEY in the "
                                        "environment (any value, e.g. OPENAI_API_KEY=none, for a server that takes "
                                        "no key); for a keyless run use --model mlab/demo"]
    assert not (tmp_path / "runs").exists()


def test_the_cost_limit_ends_the_run_once_spent(quick_retries, tiny_task, tmp_path):
    with FakeOpenAI(REPLIES, usage=(1000, 100)) as server:  # about $0.013 a call for gpt-4-turbo
        code, out, _, run_dir = run_against(server, tiny_task, tmp_path, "--cost", "0.01")
    assert code == 1 and len(server.requests) == 1
    assert [r["action"] for r in trace(run_dir)] == ["Execute Script", None]
    document = result(run_dir)
    assert (document["end_reason"], document["failure_mode"]) == ("cost_limit", "limit reached")
    assert document["cost"] > 0.01


def test_a_cost_limit_on_an_unpriced_model_is_reported_not_ignored_silently(quick_retries, tiny_task, tmp_path):
    with FakeOpenAI(REPLIES) as server:
        code, _, err = mlab("run", tiny_task, "--model", "openai/model-without-a-price", "--api-base", server.base,
                            "--cost", "1", "--runs-dir", tmp_path)
    assert code == 0
    assert err.count("the cost limit ($1) cannot be applied") == 1
    assert result(only_run(tmp_path))["cost"] is None
