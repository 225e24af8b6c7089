"""A hostile model or OpenAI-compatible server: deeply nested tool-call arguments (run or not run)
and reasoning blocks, huge arguments and bodies, a server that trickles its answer. Each ends the
run with a result.json (a format error counted as a retry, or a model API failure), never a crash."""
import json
import time

import pytest

from agent_helpers import mlab, only_run, result, trace, trace_problems
from fake_openai import FakeOpenAI, tool_call
from tool_helpers import use_tools_agent

MODEL = "openai/gpt-4o"
DEEP = '{"a": ' * 5000 + "1" + "}" * 5000  # past Python's recursion limit: litellm's own decode fails
SHALLOWER = "[" * 900 + "]" * 900  # within it: litellm decodes it, mlab's later encodes would not
DONE = tool_call("final_answer", {"final_answer": "done"}, "call_z")


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("MLAB_MODEL_BACKOFF", "0")
    monkeypatch.setenv("MLAB_MODEL_ATTEMPTS", "2")
    monkeypatch.setenv("MLAB_MODEL_TIMEOUT", "2")


def serve(monkeypatch, tiny_task, tmp_path, replies, faults=None, fields=None):
    use_tools_agent(monkeypatch, fields)
    with FakeOpenAI(replies, faults=faults) as server:
        code, out, err = mlab("run", tiny_task, "--model", MODEL, "--api-base", server.base,
                              "--runs-dir", tmp_path / "runs")
    assert code in (0, 1), err
    assert "Traceback" not in out + err
    run_dir = only_run(tmp_path / "runs")
    assert trace_problems(run_dir) == []
    return result(run_dir), trace(run_dir), server.requests


@pytest.mark.parametrize("deep", [DEEP, SHALLOWER], ids=["5000", "900"])
def test_deeply_nested_arguments_of_a_call_that_is_run_are_a_format_error(key, monkeypatch, tiny_task, tmp_path, deep):
    document, records, requests = serve(monkeypatch, tiny_task, tmp_path, [tool_call("list_files", deep), DONE])
    assert document["end_reason"] == "final_answer"
    depth = "5,000" if deep is DEEP else "900"
    assert records[0]["model"]["format_errors"] == [
        f"the arguments of list_files were not read: they nest objects or lists {depth} levels deep; at most 100 "
        "levels are accepted"]
    json.dumps(requests[1])  # what was sent back can be encoded


@pytest.mark.parametrize("deep", [DEEP, SHALLOWER], ids=["5000", "900"])
def test_deeply_nested_arguments_of_a_call_not_run_are_echoed_safely(key, monkeypatch, tiny_task, tmp_path, deep):
    two = tool_call("list_files", {"dir_path": "."}, "call_x", more=[("list_files", deep, "call_y")])
    document, records, requests = serve(monkeypatch, tiny_task, tmp_path, [two, DONE])
    assert document["end_reason"] == "final_answer"
    echoed = next(m for m in requests[1]["messages"] if m.get("tool_calls"))
    assert len(echoed["tool_calls"][1]["function"]["arguments"]) < 3000


DEEP_BLOCKS = ('{"id": "x", "object": "chat.completion", "created": 0, "model": "gpt-4o", "choices": [{"index": 0, '
               '"finish_reason": "stop", "message": {"role": "assistant", "content": "hi", "thinking_blocks": '
               + "[" * 900 + "]" * 900 + '}}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}')


def test_deeply_nested_reasoning_blocks_are_a_model_api_failure(key, monkeypatch, tiny_task, tmp_path):
    document, records, requests = serve(monkeypatch, tiny_task, tmp_path, [DONE],
                                        faults=[("body", DEEP_BLOCKS)] * 2)
    assert document["failure_mode"] == "model API failure"
    assert "nest" in document["detail"]


# -- the client's bounds on a call: wall-clock time and bytes read -----------------------

from mlab.models.client import ModelClient, TierConfig  # noqa: E402
from mlab.models.errors import ModelError  # noqa: E402

HI = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("fault", ["trickle", "trickle headers"])
def test_a_server_that_trickles_is_cut_off_at_the_time_out_of_the_whole_call(key, fault):
    with FakeOpenAI(["warm", "unused"], faults=[None, fault]) as server:
        client = ModelClient({"main": TierConfig(MODEL)}, api_base=server.base, timeout_s=0.6, max_attempts=1)
        assert client.chat("main", HI).response == "warm"  # litellm's first call in a process is slow
        started = time.monotonic()
        with pytest.raises(ModelError, match="no answer within the time-out"):
            client.chat("main", HI)
        took = time.monotonic() - started
    assert took < 1.5  # each read came within the per-read time-out; the call's 0.6 s still held


def test_a_huge_response_body_is_refused_after_the_bound_without_being_read_whole(key):
    size = 1 << 30
    with FakeOpenAI(["unused"], faults=[("huge", size)]) as server:
        client = ModelClient({"main": TierConfig(MODEL)}, api_base=server.base, max_attempts=3,
                             max_response_bytes=4 << 20)
        with pytest.raises(ModelError, match=r"refused: the response is more than 4,194,304 bytes long"):
            client.chat("main", HI)
        assert len(server.requests) == 1  # a provider error, not retried
    assert server.sent < 64 << 20  # the client stopped reading soon after its bound


def test_tool_call_arguments_past_their_bound_are_a_format_error(key, monkeypatch, tiny_task, tmp_path):
    import mlab.models.transport

    monkeypatch.setattr(mlab.models.transport, "MAX_ARGUMENT_CHARS", 1 << 20)  # 16 Mi: the same, slower
    big = json.dumps({"file_name": "big.txt", "content": "x" * (1 << 20)})  # 1 Mi + 39 characters
    document, records, _ = serve(monkeypatch, tiny_task, tmp_path, [tool_call("write_file", big), DONE])
    assert document["end_reason"] == "final_answer"
    assert records[0]["model"]["format_errors"] == [
        "the arguments of write_file were not read: they are 1,048,615 characters long, more than the 1,048,576 a "
        "tool call may hold; write large files in parts (Append File)"]
    assert not (only_run(tmp_path / "runs") / "workspace" / "big.txt").exists()


def test_a_scripted_replies_file_nested_too_deep_is_refused_with_a_message(tmp_path):
    from mlab.models.errors import RepliesExhausted

    path = tmp_path / "replies.json"
    path.write_text("[" * 5000 + "]" * 5000)
    client = ModelClient({"main": TierConfig(f"mlab/scripted:{path}")})
    with pytest.raises(RepliesExhausted, match="is not valid JSON: the file nests objects or lists 5,000 levels deep"):
        client.complete("main", "hi", purpose="step")


def test_arguments_a_provider_hands_over_decoded_and_nested_too_deep_are_refused_not_encoded():
    from types import SimpleNamespace

    from mlab.models.decode import refusal
    from mlab.models.response import reply_message

    deep = inner = {}
    for _ in range(5000):
        inner["a"] = inner = {}
    response = SimpleNamespace(choices=[{"message": {"content": "", "tool_calls": [
        {"id": "call_1", "function": {"name": "list_files", "arguments": deep}}]}}])
    arguments = reply_message(response)["tool_calls"][0]["function"]["arguments"]
    assert refusal(arguments) == "they nest more than 100 levels deep"


def test_a_run_against_a_trickling_server_ends_on_time_with_a_model_api_failure(key, monkeypatch, tiny_task,
                                                                                tmp_path):
    monkeypatch.setenv("MLAB_MODEL_TIMEOUT", "0.5")
    started = time.monotonic()
    document, records, requests = serve(monkeypatch, tiny_task, tmp_path, [DONE], faults=["trickle"] * 2)
    assert time.monotonic() - started < 8  # two attempts of 0.5 s, not the 200 s the server would take
    assert document["failure_mode"] == "model API failure" and len(requests) == 2
    assert "failed after 2 attempt(s): Timeout: no answer within the time-out" in document["detail"]


def test_the_environment_s_proxy_is_still_followed(key, monkeypatch):
    # the fake server answers a proxied request too: a reply means the request went through the proxy
    with FakeOpenAI(["through the proxy"]) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.base.removesuffix("/v1"))
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        client = ModelClient({"main": TierConfig(MODEL)}, api_base="http://model.invalid/v1", max_attempts=1)
        assert client.chat("main", HI).response == "through the proxy"


def test_a_gzip_body_sent_unasked_is_read_and_a_gzip_bomb_is_refused(key):
    import gzip

    answer = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "gpt-4o", "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "zipped"}}]})
    bomb = gzip.compress(b" " * (16 << 20))  # 16 MiB of spaces in about 16 KiB
    with FakeOpenAI([], faults=[("gzip", gzip.compress(answer.encode())), ("gzip", bomb)]) as server:
        client = ModelClient({"main": TierConfig(MODEL)}, api_base=server.base, max_attempts=1,
                             max_response_bytes=4 << 20)
        assert client.chat("main", HI).response == "zipped"
        with pytest.raises(ModelError, match="more than 4,194,304 bytes long once decompressed"):
            client.chat("main", HI)


def test_reasoning_fields_nested_too_deep_in_a_decoded_response_are_a_malformed_response():
    from types import SimpleNamespace

    from mlab.models.response import MalformedResponse, reply_message

    blocks = inner = []
    for _ in range(150):  # decoded already (an offline or SDK object), past the bound of 100
        inner.append([])
        inner = inner[0]
    response = SimpleNamespace(choices=[{"message": {"content": "hi", "thinking_blocks": blocks}}])
    with pytest.raises(MalformedResponse, match="the response's reasoning nests objects or lists 151 levels deep"):
        reply_message(response)


def test_an_unreachable_api_base_is_said_plainly_in_the_run_s_last_lines_and_kept_whole_in_the_result(
        key, tiny_task, tmp_path):
    from fake_openai import closed_port_base

    base = closed_port_base()
    code, out, err = mlab("run", tiny_task, "--model", MODEL, "--api-base", base, "--runs-dir", tmp_path / "runs")
    assert code == 1 and "Traceback" not in out + err
    assert f"mlab: {MODEL}: cannot reach {base}: connection refused; retrying" in err
    detail = [line for line in out.splitlines() if line.startswith("detail: ")]
    assert len(detail) == 1 and detail[0].endswith(f"cannot reach {base}: connection refused"), detail
    assert "litellm" not in out and "InternalServerError" not in out
    # the whole text (litellm's exception too) stays in result.json's detail and the trace's last record
    document = result(only_run(tmp_path / "runs"))
    assert document["detail"].startswith(detail[0][len("detail: "):] + " (InternalServerError: litellm.")
    assert trace(only_run(tmp_path / "runs"))[-1]["observation"] == document["detail"]
