"""The standard external agents of the field (tasks/std/external.mlab), each installed from its
registry at its pinned version (npm or PyPI, once per session into the shared agent cache) and run
on house-price against a scripted upstream: the first reply is a tool call to the agent's own
shell tool running the starter, which writes submission.csv inside the sandbox; the second is a
final message. Each run ends scored, one trace step per exchange, the dialect recorded, and the
agent's log holds no provider key and no attempt to reach anything but the gateway.

Under CI=true a missing node or npm, a missing Python 3.12 (OpenHands), or a registry that does not
answer, fails these tests (.ci/run provides them, and installs the agents into the shared agent cache
with `mlab prepare --agent` before the suite, so the suite's time holds no install); elsewhere they
skip with the reason."""
from __future__ import annotations

import json
import os
import re
import shutil
import sys

import pytest

from agent_helpers import mlab, only_run, result, scripted, trace
from network_seen import assert_only_the_gateway
from mlab.documents.view import thaw
from mlab.sandbox.runner import sandbox_available

STD_EXTERNAL = {"mini-swe-agent": "chat", "aide": "chat", "own-script": "chat", "opencode": "chat", "aider": "chat",
                "openhands": "chat", "claude-code": "anthropic", "codex": "responses", "gemini-cli": "gemini"}
STARTER = "python train.py && head -3 submission.csv"
FINAL = "The submission is written to submission.csv."
# Each agent's shell tool as its model calls it, and the exchanges one run makes: aider's --message
# mode sends one message and runs the command its reply proposes, then exits (no second call).
SHELL = {
    "opencode": ({"content": None, "tool_calls": [{"name": "bash", "arguments": {
        "command": STARTER, "description": "Run the starter, which writes submission.csv"}}]}, 2),
    "claude-code": ({"content": None, "tool_calls": [{"name": "Bash", "arguments": {
        "command": STARTER, "description": "Run the starter, which writes submission.csv"}}]}, 2),
    "codex": ({"content": None, "tool_calls": [{"name": "exec_command", "arguments": {"cmd": STARTER}}]}, 2),
    "gemini-cli": ({"content": None, "tool_calls": [{"name": "run_shell_command", "arguments": {
        "command": STARTER, "description": "Run the starter, which writes submission.csv"}}]}, 2),
    # OpenHands' terminal tool; its LLM security analyzer (headless mode) wants each call's risk named
    "openhands": ({"content": None, "tool_calls": [{"name": "terminal", "arguments": {
        "command": STARTER, "security_risk": "LOW"}}]}, 2),
    "aider": (f"I will run the starter, which writes the submission.\n\n```bash\n{STARTER}\n```\n", 1),
}
# What an attempt to reach anything but the gateway leaves in a log: a name lookup or a refused connection.
OUTSIDE = re.compile(r"ENOTFOUND|EAI_AGAIN|getaddrinfo|Failed to resolve|Name or service not known|"
                     r"Temporary failure in name resolution|ECONNREFUSED|NameResolutionError|Could not resolve host|"
                     r"githubusercontent|models\.dev|statsig|sentry\.io|api\.anthropic\.com|api\.openai\.com")


def need(condition: bool, reason: str) -> None:
    if not condition:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason} (CI=true: .ci/run must provide it)")
        pytest.skip(reason)


def test_mlab_list_lists_every_agent_run_accepts(tmp_path, monkeypatch):
    """The standard external agents join any task's build under `mlab run --agent`, so `mlab list`
    shows them beside the build's own agents, with their dialect."""
    monkeypatch.chdir(tmp_path)  # no tasks/ here: the bundled tasks, which do not use std "external"
    code, out, err = mlab("list", "--json")
    assert code == 0, err
    agents = {a["name"]: a for a in json.loads(out)["agents"]}
    for name, dialect in STD_EXTERNAL.items():
        assert agents[name]["kind"] == "external" and agents[name]["dialect"] == dialect, name
    assert agents["research"]["dialect"] is None
    code, out, err = mlab("list")
    line = next(line for line in out.splitlines() if line.strip().startswith("claude-code"))
    assert "runs a command in the sandbox, speaks anthropic" in line


@pytest.fixture(scope="module")
def installed(agent_envs):
    """name → the agent's environment, installed on first use (once per session and agent)."""
    from mlab.build import resolve_task
    from mlab.cli.run import with_std_external
    from mlab.external.environment import AgentEnvironmentError, prepare_environment
    from mlab.run.agent_python import PythonMissing, agent_python
    from mlab.run.node import NodeMissing

    need(sandbox_available()[0], "bubblewrap cannot start a sandbox here")
    task = with_std_external(resolve_task("house-price"))
    made = {}

    def install(name: str):
        if name not in made:
            spec = thaw(task.build.agent(name).view.external)
            if spec.get("npm"):
                need(shutil.which("node") is not None and shutil.which("npm") is not None,
                     "node and npm are not installed")
            try:
                interpreter = agent_python(task.build.agent(name))  # the Python it names, else the run's
                made[name] = prepare_environment(name, spec["requires"], interpreter.path if interpreter else
                                                 sys.executable, say=lambda line: None,
                                                 no_deps=spec.get("no_deps") or [], npm=spec.get("npm") or [])
            except PythonMissing as problem:
                need(False, str(problem))
            except (AgentEnvironmentError, NodeMissing) as problem:
                need(False, f"agent {name} could not be installed from its registry: {problem}")
        return made[name]

    return install


@pytest.fixture
def short_grace(monkeypatch):
    """A run that ended leaves its agent 1 s to end by itself before it is stopped, not GRACE_S (5 s):
    the run's end is the gateway's either way, and several agents only retry the refused call."""
    from mlab.external import runner

    monkeypatch.setattr(runner, "GRACE_S", 1.0)


def external_calls(run) -> list[dict]:
    return [r for r in trace(run) if (r.get("model") or {}).get("external")]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SHELL))
def test_the_agent_scores_house_price_with_its_own_shell_tool(tmp_path, installed, name):
    installed(name)
    reply, exchanges = SHELL[name]
    code, out, err = mlab("run", "house-price", "--agent", name, "--model", scripted(tmp_path, [reply, FINAL]),
                          "--runs-dir", tmp_path / "runs")
    run = only_run(tmp_path / "runs")
    document = result(run)
    log = (run / "output" / "agent.log").read_text(errors="replace")
    assert document["agent_kind"] == "external" and document["score"] is not None, (err, log[-3000:])
    assert document["end_reason"] == "agent_exited" and document["model_calls"] == exchanges
    calls = external_calls(run)
    assert len(calls) == exchanges, "one trace step per exchange"
    assert {c["model"]["dialect"] for c in calls} == {STD_EXTERNAL[name]}
    assert "Wrote submission.csv" in log, "the agent's own tool ran the starter inside the sandbox"
    assert (run / "workspace" / "submission.csv").is_file()
    if exchanges == 2:  # the tool's output went back to the model, in the second exchange's request
        assert "Id,SalePrice" in json.dumps(calls[1]["model"]["request"]["messages"])
    assert "sk-never-enters-the-sandbox" not in log and "sk-ant-never-enters-the-sandbox" not in log
    assert not OUTSIDE.search(log), f"the agent tried to reach something else: {OUTSIDE.search(log).group(0)}"
    assert_only_the_gateway(log)  # counted by the sandbox's network namespace, whatever the agent's language
    recorded = json.loads((run / "output" / "agent-environment.json").read_text())
    spec_npm = recorded.get("npm") or []
    for package in spec_npm:  # what the registry sent, with its integrity hash, as the run used it
        name_only = package.rsplit("@", 1)[0]
        assert recorded["npm_packages"][name_only]["integrity"].startswith("sha512-")
    meta = json.loads((run / "run.json").read_text())
    if spec_npm:
        assert meta["node"]["version"] == recorded["node"]["version"]
    if name == "openhands":  # installed into the Python its requires names (3.12), as run.json says
        assert meta["agent_python"]["wanted"] == "3.12" and recorded["python"].startswith(meta["agent_python"]["version"])
        assert meta["agent_python"]["version"].startswith("3.12.")


# The first reply of a run whose token limit (1000) its first exchange uses up: each agent's shell
# call of a quick command (not the starter, whose training would only lengthen the test), and for
# aider, whose --message mode makes one exchange when its command runs, an edit that does not
# apply, which it sends back to the model (a second call, refused).
PAST_THE_LIMIT = dict({name: json.loads(json.dumps(reply).replace(STARTER, "echo started"))
                       for name, (reply, _) in SHELL.items()}, aider=(
    "train.py\n```python\n<<<<<<< SEARCH\nthis line is not in the file\n=======\nprint('no')\n"
    ">>>>>>> REPLACE\n```\n"))
# The agents that stream their replies: aider asks for whole ones (--no-stream), and so does OpenHands
# (its LLM's `stream` is off unless a program turns it on, which its CLI does not); the model client's
# time-out bounds those, so no stream of theirs can stall.
STREAMING = sorted(set(SHELL) - {"aider", "openhands"})


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PAST_THE_LIMIT))
def test_a_token_limit_ends_the_agents_run_with_its_failure_mode(tmp_path, installed, short_grace, name):
    """The gateway refuses the call past the run's token limit with the dialect's rate-limit error;
    the agent is given a moment to end by itself, then stopped: the run ends `tokens_limit`."""
    installed(name)
    code, out, err = mlab("run", "house-price", "--agent", name, "--model",
                          scripted(tmp_path, [PAST_THE_LIMIT[name], FINAL, FINAL]), "--tokens", "1000",
                          "--runs-dir", tmp_path / "runs")
    run = only_run(tmp_path / "runs")
    document = result(run)
    log = (run / "output" / "agent.log").read_text(errors="replace")
    assert document["end_reason"] == "tokens_limit" and document["failure_mode"] == "limit reached", (err, log[-2000:])
    assert len(external_calls(run)) == 1
    assert "tokens limit" in trace(run)[-1]["observation"]


@pytest.mark.slow
@pytest.mark.parametrize("name", STREAMING)
def test_a_stalled_stream_ends_the_agents_run_with_its_failure_mode(tmp_path, installed, short_grace, monkeypatch,
                                                                    name):
    """The upstream sends the first piece of its streamed reply and then nothing: past the stall time
    the gateway ends the stream with the dialect's error event, records what came, and ends the run,
    whatever the agent then does (retry, wait or exit)."""
    from fake_openai import FakeOpenAI

    installed(name)
    monkeypatch.setenv("MLAB_STALL_S", "2")
    with FakeOpenAI(["Never finished, this reply."], faults=["stall"]) as upstream:
        code, out, err = mlab("run", "house-price", "--agent", name, "--model", "openai/upstream",
                              "--api-base", upstream.base, "--runs-dir", tmp_path / "runs")
    run = only_run(tmp_path / "runs")
    document = result(run)
    log = (run / "output" / "agent.log").read_text(errors="replace")
    assert document["end_reason"] == "failed" and document["failure_mode"] == "model API failure", (err, log[-2000:])
    calls = external_calls(run)
    assert len(calls) == 1 and calls[0]["model"]["stalled"] is True
    assert calls[0]["model"]["dialect"] == STD_EXTERNAL[name] and calls[0]["model"]["stream"] is True
    assert "stalled" in trace(run)[-1]["observation"]


@pytest.mark.slow
def test_codex_with_an_openai_provider_compacts_through_the_runs_model(tmp_path, installed):
    """Codex pointed at the gateway as its OpenAI provider compacts remotely when its context limit
    is passed: a streamed /v1/responses ending with a compaction_trigger, which the gateway answers
    with the run's model (its own exchange), and Codex goes on with the summary it sent back."""
    import subprocess

    from gateway_helpers import scripted_client, served

    binary = installed("codex") / "node" / "node_modules" / ".bin" / "codex"
    home = tmp_path / "codex-home"
    home.mkdir()
    replies = [SHELL["codex"][0] | {"tool_calls": [{"name": "exec_command", "arguments": {"cmd": "echo hi"}}]},
               "The summary: echo ran.", "Done."]
    with served(tmp_path, scripted_client(tmp_path, replies)) as gateway:
        (home / "config.toml").write_text(
            f'model = "main"\nmodel_provider = "openai"\nopenai_base_url = "{gateway.base}/v1"\n'
            'model_auto_compact_token_limit = 50\ncheck_for_update_on_startup = false\nweb_search = "disabled"\n'
            '[agents]\nenabled = false\n[features]\ngoals = false\nimage_generation = false\nin_app_updates = false\nresponses_websockets = false\nresponses_websockets_v2 = false\n')
        env = {"PATH": f"{binary.parent}:{os.environ['PATH']}", "HOME": str(tmp_path), "CODEX_HOME": str(home)}
        subprocess.run([binary, "login", "--with-api-key"], input=gateway.key, env=env, text=True,
                       capture_output=True, timeout=60, check=True)
        done = subprocess.run([binary, "exec", "--json", "--skip-git-repo-check",
                               "--dangerously-bypass-approvals-and-sandbox", "--model", "main", "Run echo hi."],
                              env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=180)
        exchanges = [exchange for exchange, _ in gateway.records]
    assert done.returncode == 0 and '"text":"Done."' in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    assert [bool(e.get("compaction")) for e in exchanges] == [False, True, False]
    assert "Summarise this conversation" in exchanges[1]["messages"][-1]["content"]
    assert {"role": "user", "content": "A summary of the conversation so far, which was compacted:\n\n"
                                       "The summary: echo ran."} in exchanges[2]["messages"]
