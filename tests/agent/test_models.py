"""Model calls through litellm: offline providers, a fake OpenAI server with faults, keys, cost."""
import json

import pytest

from fake_openai import FakeOpenAI, SilentServer, closed_port_base
from mlab.documents.agent import Agent
from mlab.documents.view import thaw
from mlab.models import offline as offline_models
from mlab.models.client import ModelClient, TierConfig, check_keys
from mlab.models.errors import MissingKey, ModelError, RepliesExhausted
from trace_records import record


def scripted(tmp_path, replies):
    path = tmp_path / "replies.json"
    path.write_text(json.dumps(replies))
    return f"mlab/scripted:{path}"


def test_scripted_replies_come_in_order_and_then_run_out(tmp_path):
    model = scripted(tmp_path, ["first", "second"])
    client = ModelClient({"main": TierConfig(model), "fast": TierConfig(model)})
    assert client.complete("main", "prompt one", purpose="step").response == "first"
    call = client.complete("fast", "prompt two", purpose="summarize")
    assert call.response == "second"
    assert call.cost == 0.0 and call.prompt_tokens > 0 and not call.usage_reported
    with pytest.raises(RepliesExhausted, match="no reply left .*it had 2; reply 3"):
        client.complete("main", "prompt three", purpose="step")


def test_scripted_file_that_is_not_a_list_of_strings_is_reported(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"not": "a list"}')
    client = ModelClient({"main": TierConfig(f"mlab/scripted:{path}")})
    with pytest.raises(RepliesExhausted, match="JSON list of strings"):
        client.complete("main", "hi", purpose="step")


def test_resume_position_continues_at_the_next_reply(tmp_path):
    model = scripted(tmp_path, ["a", "b", "c"])
    offline = offline_models.OfflineModels()
    offline.set_position(model, "main", 2)
    client = ModelClient({"main": TierConfig(model)}, offline=offline)
    assert client.complete("main", "x", purpose="step").response == "c"


def test_replay_reads_calls_per_tier_from_a_trace(tmp_path):
    records = [record(1, model={"calls": [{"tier": "main", "response": "m1"}, {"tier": "fast", "response": "f1"}]}),
               record(2, model={"calls": [{"tier": "main", "response": "m2"}]})]
    (tmp_path / "trace.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n{broken")
    model = f"mlab/replay:{tmp_path}"
    client = ModelClient({"main": TierConfig(model), "fast": TierConfig(model)})
    assert [client.complete("main", "p", purpose="step").response for _ in range(2)] == ["m1", "m2"]
    assert client.complete("fast", "p", purpose="summarize").response == "f1"
    with pytest.raises(RepliesExhausted):
        client.complete("fast", "p", purpose="summarize")


def test_demo_plays_the_demonstration_and_labels_helper_calls():
    client = ModelClient({"main": TierConfig("mlab/demo"), "fast": TierConfig("mlab/demo")},
                         offline=offline_models.OfflineModels(["reply one"]))
    assert client.complete("main", "p", purpose="step").response == "reply one"
    assert "demo model" in client.complete("fast", "summarize this", purpose="summarize").response


def test_demo_without_a_demonstration_lists_runs_and_submits():
    client = ModelClient({"main": TierConfig("mlab/demo")},
                         offline=offline_models.OfflineModels(None, starter_script="baseline.py"))
    replies = [client.complete("main", "p", purpose="step").response for _ in range(3)]
    assert "Action: List Files" in replies[0]
    assert '"script_name": "baseline.py"' in replies[1]
    assert "Action: Final Answer" in replies[2]


def test_unknown_offline_model_is_a_clear_error():
    client = ModelClient({"main": TierConfig("mlab/oracle")})
    with pytest.raises(ModelError, match="unknown offline model 'mlab/oracle'"):
        client.complete("main", "p", purpose="step")


def test_fake_openai_server_usage_is_taken_from_the_reply(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI(["hello"], usage=(123, 45)) as server:
        client = ModelClient({"main": TierConfig("openai/gpt-4-turbo", {"temperature": 0.1})},
                             api_base=server.base, seed=3)
        call = client.complete("main", "hi", purpose="step")
    assert call.response == "hello"
    assert (call.prompt_tokens, call.completion_tokens, call.usage_reported) == (123, 45, True)
    assert call.cost is not None and call.cost > 0
    assert server.requests[0]["temperature"] == 0.1
    assert server.requests[0]["seed"] == 3


def test_rate_limits_and_server_errors_are_retried_with_backoff(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    waits = []
    with FakeOpenAI(["finally"], faults=[429, 500]) as server:
        client = ModelClient({"main": TierConfig("openai/gpt-4-turbo")}, api_base=server.base, sleep=waits.append)
        call = client.complete("main", "hi", purpose="step")
    assert call.response == "finally" and call.attempts == 3
    assert waits == [1.0, 2.0]


def test_a_failing_provider_ends_in_a_model_error_not_a_hang(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI([], faults=[500] * 10) as server:
        client = ModelClient({"main": TierConfig("openai/gpt-4-turbo")}, api_base=server.base,
                             sleep=lambda s: None, max_attempts=3)
        with pytest.raises(ModelError, match="failed after 3 attempt") as info:
            client.complete("main", "hi", purpose="step")
    assert info.value.failure_mode == "model API failure"


def test_time_outs_are_retried_then_reported(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    retries = []
    with FakeOpenAI(["in time"], faults=["hang"]) as server:  # the first call times out, the second is answered
        client = ModelClient({"main": TierConfig("openai/gpt-4-turbo")}, api_base=server.base,
                             sleep=lambda s: None, timeout_s=0.5, max_attempts=2, on_retry=retries.append)
        call = client.complete("main", "hi", purpose="step")
    assert call.response == "in time" and call.attempts == 2 and len(server.requests) == 2
    assert len(retries) == 1 and "no answer within the time-out" in retries[0] and "attempt 2 of 2" in retries[0]
    with FakeOpenAI(["late"], faults=["hang", "hang"]) as server:
        client = ModelClient({"main": TierConfig("openai/gpt-4-turbo")}, api_base=server.base,
                             sleep=lambda s: None, timeout_s=0.5, max_attempts=2, on_retry=retries.append)
        with pytest.raises(ModelError, match=r"failed after 2 attempt\(s\): Timeout"):
            client.complete("main", "hi", purpose="step")
    assert len(server.requests) == 2


def test_a_missing_key_names_the_variable_and_the_keyless_model(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(MissingKey, match="ANTHROPIC_API_KEY.*--model mlab/demo"):
        check_keys(["anthropic/claude-3-opus-20240229"])
    check_keys(["mlab/demo", "ollama/llama3"])  # offline and local models need no key


def test_a_missing_key_names_the_tiers_and_their_options(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.raises(MissingKey, match=r"^the fast and edit tiers' model anthropic/claude-haiku-4-5 needs "
                                         r"ANTHROPIC_API_KEY .*--fast-model or --edit-model"):
        check_keys({"main": "openai/gpt-4o", "fast": "anthropic/claude-haiku-4-5", "edit": "anthropic/claude-haiku-4-5"})


AGENT = Agent.of({"schema": "https://mlab.dev/spec/agent.schema.json", "schema_version": 1, "name": "research",
                  "action_set": "research", "history_steps": 3, "summarize_over_chars": 5000, "format_retries": 2,
                  "reply": None, "models": {
                      "main": {"default": "anthropic/claude-sonnet-4-5", "params": {"temperature": 0.5}},
                      "fast": {"default": "anthropic/claude-haiku-4-5", "params": {}},
                      "edit": {"default": "anthropic/claude-sonnet-4-5", "params": {}}}})


def sources(tiers):
    return {tier: (c["model"], c["source"]) for tier, c in tiers.items()}


def test_the_agents_helper_models_go_with_its_own_main_model_only():
    from mlab.cli.tiers import resolve_models

    declared = {"main": ("anthropic/claude-sonnet-4-5", "agent"), "fast": ("anthropic/claude-haiku-4-5", "agent"),
                "edit": ("anthropic/claude-sonnet-4-5", "agent")}
    assert sources(resolve_models(AGENT, None, None, None)) == declared
    assert sources(resolve_models(AGENT, "anthropic/claude-sonnet-4-5", None, None)) == \
        {**declared, "main": ("anthropic/claude-sonnet-4-5", "option")}
    assert sources(resolve_models(AGENT, "openai/gpt-4o", None, None)) == \
        {"main": ("openai/gpt-4o", "option"), "fast": ("openai/gpt-4o", "main"), "edit": ("openai/gpt-4o", "main")}
    assert sources(resolve_models(AGENT, "openai/gpt-4o", "openai/gpt-4o-mini", None)) == \
        {"main": ("openai/gpt-4o", "option"), "fast": ("openai/gpt-4o-mini", "option"),
         "edit": ("openai/gpt-4o", "main")}
    assert resolve_models(AGENT, "openai/gpt-4o", None, None)["main"]["params"] == {"temperature": 0.5}


def test_the_std_agents_default_models_have_a_price():
    from mlab.build import resolve_task
    from mlab.models.client import import_litellm

    litellm = import_litellm()
    build = resolve_task("house-price", None).build
    for name in build.agent_names:
        for tier, declared in thaw(build.agent(name).view.models).items():
            model = declared["default"]
            assert model, (name, tier)
            prompt, completion = litellm.cost_per_token(model=model, prompt_tokens=1000, completion_tokens=100)
            assert prompt > 0 and completion > 0, (name, tier, model)


def test_an_unreachable_api_base_is_said_once_plainly_with_the_detail_kept_in_the_error(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    base, said = closed_port_base(), []
    client = ModelClient({"main": TierConfig("openai/some-model")}, api_base=base, sleep=lambda s: None,
                         max_attempts=3, timeout_s=5, on_retry=said.append)
    with pytest.raises(ModelError, match=f"failed after 3 attempt.*cannot reach {base}: connection refused "
                                         r"\(InternalServerError: .*Connection error"):
        client.complete("main", "hi", purpose="step")
    # one line for the same failure, plain (no litellm exception text), naming the address
    assert said == [f"mlab: openai/some-model: cannot reach {base}: connection refused; retrying in 1s (attempt 2 of 3)"]


def test_a_server_that_never_answers_fails_within_the_time_out_bound(monkeypatch):
    import time

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    said = []
    with SilentServer() as server:
        client = ModelClient({"main": TierConfig("openai/some-model")}, api_base=server.base, backoff_s=0,
                             max_attempts=2, timeout_s=0.5, on_retry=said.append)
        start = time.monotonic()
        with pytest.raises(ModelError, match=f"at {server.base} failed after 2 attempt.*no answer within"):
            client.complete("main", "hi", purpose="step")
        assert time.monotonic() - start < 60  # bounded by attempts x time-out (+ backoff), not a hang
    assert said and said[0].endswith("(attempt 2 of 2)") and server.base in said[0]


def test_unpriced_models_have_unknown_cost_not_zero(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI(["x"]) as server:
        client = ModelClient({"main": TierConfig("openai/some-model-nobody-prices")}, api_base=server.base)
        assert client.complete("main", "hi", purpose="step").cost is None


def test_the_human_model_shows_the_prompt_and_reads_the_reply_from_the_terminal(monkeypatch, capsys):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.StringIO("Action: List Files\nAction Input: {}\n.\n"))
    client = ModelClient({"main": TierConfig("mlab/human")})
    assert client.complete("main", "THE PROMPT", purpose="step").response == "Action: List Files\nAction Input: {}\n"
    shown = capsys.readouterr().out
    assert "prompt for the main model (step)" in shown and "THE PROMPT" in shown
    with pytest.raises(RepliesExhausted, match="no reply on standard input"):
        client.complete("main", "again", purpose="step")


def test_each_client_plays_its_own_offline_models(tmp_path):
    model = scripted(tmp_path, ["a", "b"])
    first, second = ModelClient({"main": TierConfig(model)}), ModelClient({"main": TierConfig(model)})
    assert first.complete("main", "x", purpose="step").response == "a"
    assert second.complete("main", "x", purpose="step").response == "a"
    assert first.complete("main", "x", purpose="step").response == "b"
