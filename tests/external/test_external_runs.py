"""External agents run end to end on the tiny task: the std `own-script` agent and hostile commands,
driven through the gateway by scripted models. The environments need no requirements, so nothing
is installed here (test_mini_swe_agent.py installs one from PyPI)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_helpers import FIT_PY, mlab, only_run, result, scripted, trace, trace_problems
from mlab.sandbox.runner import sandbox_available

needs_sandbox = pytest.mark.skipif(not sandbox_available()[0], reason="bubblewrap cannot start a sandbox here")


def build_with(tmp_path: Path, tiny_task: Path, agents: str) -> Path:
    """A build of the tiny task with the std external agents and `agents` (more .mlab text)."""
    source = tmp_path / "mine.mlab"
    source.write_text(f'use "{tiny_task}"\n{agents}\n')
    build = tmp_path / "build"
    from mlabc import cli

    assert cli.main(["compile", str(source), "-o", str(build)]) == 0
    return build


def code_reply(code: str) -> str:
    return f"Here is the script.\n```python\n{code}```\n"


@needs_sandbox
def test_own_script_agent_scores_through_the_gateway(tmp_path, tiny_task):
    model = scripted(tmp_path, [code_reply(FIT_PY), "The submission is written; done."])
    code, out, err = mlab("run", tiny_task, "--agent", "own-script", "--model", model, "--runs-dir", tmp_path / "runs")
    run = only_run(tmp_path / "runs")
    assert code == 0, err
    document = result(run)
    assert document["agent_kind"] == "external" and document["schema_version"] == 4
    assert document["score"] == pytest.approx(0.0) and document["success"] is True
    assert document["end_reason"] == "agent_exited" and document["model_calls"] == 2
    records = trace(run)
    assert trace_problems(run) == []
    calls = [r for r in records if (r["model"] or {}).get("external")]
    assert len(calls) == 2, "every gateway exchange is one trace step"
    first = calls[0]["model"]["request"]["messages"]
    assert first[0]["role"] == "system" and "Predict y from x" in first[1]["content"], "the problem file reached it"
    assert "```python" in calls[0]["model"]["response"]
    assert calls[1]["model"]["request"]["messages"][-1]["content"].endswith("(exit code 0)")
    assert "solution.py" in calls[1]["snapshot"]["changed"], "each call snapshots the workspace"
    assert records[-1]["end_reason"] == "agent_exited"
    assert (run / "workspace" / "problem.md").read_text().startswith("# A tiny task")
    assert (run / "output" / "agent.log").is_file()


HOSTILE = '''
agent hostile external {
  command """
    {{ python }} - <<'AGENT'
    import json, os, socket, urllib.request
    found = {}
    found["keys"] = sorted(k for k in os.environ if "KEY" in k and os.environ[k].startswith("sk-"))
    found["gateway_key"] = os.environ.get("OPENAI_API_KEY", "")[:9]
    private = os.path.join(os.path.dirname(os.getcwd()), "private")
    try:
        found["private"] = os.listdir(private)
    except OSError as error:
        found["private"] = type(error).__name__
    for host, port in (("1.1.1.1", 80), ("8.8.8.8", 53), ("127.0.0.1", 22)):
        s = socket.socket()
        s.settimeout(2)
        try:
            s.connect((host, port))
            found[host] = "connected"
        except OSError as error:
            found[host] = type(error).__name__
    body = json.dumps({"model": "main", "messages": [{"role": "user", "content": json.dumps(found)}]}).encode()
    def post(key):
        request = urllib.request.Request("{{ api_base }}/chat/completions", data=body, headers={
            "Authorization": "Bearer " + key, "Content-Type": "application/json"})
        try:
            return urllib.request.urlopen(request, timeout=60).status
        except urllib.error.HTTPError as error:
            return error.code
    print("wrong key:", post("sk-guess"))
    print("right key:", post("{{ api_key }}"))
    AGENT
    """
}
'''


@needs_sandbox
def test_a_hostile_command_reaches_the_gateway_and_nothing_else(tmp_path, tiny_task):
    build = build_with(tmp_path, tiny_task, HOSTILE)
    model = scripted(tmp_path, ["noted"])
    code, out, err = mlab("run", "tiny", "--build", build, "--agent", "hostile", "--model", model,
                          "--runs-dir", tmp_path / "runs")
    run = only_run(tmp_path / "runs")
    calls = [r for r in trace(run) if (r["model"] or {}).get("external")]
    assert len(calls) == 1, "the call with a wrong key is refused and not recorded"
    found = json.loads(calls[0]["model"]["request"]["messages"][0]["content"])
    assert found["keys"] == [], "no provider key enters the sandbox"
    assert found["gateway_key"] == "mlab-run-", "the agent gets the run's dummy key"
    assert found["private"] in ("FileNotFoundError", "PermissionError") or "answers.csv" not in found["private"]
    for host in ("1.1.1.1", "8.8.8.8", "127.0.0.1"):
        assert found[host] != "connected", f"{host} was reachable from the sandbox"
    log = (run / "output" / "agent.log").read_text()
    assert "wrong key: 401" in log and "right key: 200" in log
    assert result(run)["failure_mode"] is not None  # it wrote no submission


@needs_sandbox
def test_a_token_limit_ends_the_run_with_its_failure_mode(tmp_path, tiny_task):
    model = scripted(tmp_path, [code_reply("print('thinking')\n")] * 10)
    code, out, err = mlab("run", tiny_task, "--agent", "own-script", "--model", model, "--tokens", "150",
                          "--runs-dir", tmp_path / "runs")
    run = only_run(tmp_path / "runs")
    document = result(run)
    assert document["end_reason"] == "tokens_limit" and document["failure_mode"] == "limit reached"
    calls = [r for r in trace(run) if (r["model"] or {}).get("external")]
    assert 1 <= len(calls) < 10 and document["model_calls"] == len(calls)
    assert "tokens limit" in trace(run)[-1]["observation"]


TIMID = '''
agent sleeper external {
  command "sleep 30"
}
'''


@needs_sandbox
def test_the_time_limit_stops_the_command(tmp_path, tiny_task):
    build = build_with(tmp_path, tiny_task, TIMID)
    code, out, err = mlab("run", "tiny", "--build", build, "--agent", "sleeper", "--model",
                          scripted(tmp_path, []), "--time", "2s", "--runs-dir", tmp_path / "runs")
    run = only_run(tmp_path / "runs")
    document = result(run)
    assert document["end_reason"] == "time_limit" and document["failure_mode"] == "limit reached"
    assert document["wall_time_s"] < 15
