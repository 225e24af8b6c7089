"""External agents run end to end on the tiny task: the std `own-script` agent and hostile commands,
driven through the gateway by scripted models. The environments need no requirements, so nothing
is installed here (test_mini_swe_agent.py installs one from PyPI)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_helpers import FIT_PY, mlab, only_run, result, scripted, trace, trace_problems
from mlab.sandbox.runner import sandbox_available
from needs import needs

needs_sandbox = needs(None if sandbox_available()[0] else f"bubblewrap cannot start a sandbox here: {sandbox_available()[1]}")


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
    assert document["agent_kind"] == "external" and document["schema_version"] == 5
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


@pytest.fixture(scope="module")
def scored_run(tmp_path_factory, tiny_task) -> Path:
    """One own-script run on the tiny task, ended and scored, for the readers below."""
    folder = tmp_path_factory.mktemp("external-run")
    model = scripted(folder, [code_reply(FIT_PY), "Done."])
    code, out, err = mlab("run", tiny_task, "--agent", "own-script", "--model", model, "--runs-dir", folder / "runs")
    assert code == 0, err
    return only_run(folder / "runs")


@needs_sandbox
def test_eval_report_view_and_exports_read_an_external_run(scored_run, tmp_path):
    code, out, err = mlab("eval", scored_run)
    assert code == 0 and scored_run.name in out, err
    code, out, err = mlab("report", scored_run.parent, "--output", tmp_path / "report")
    assert code == 0, err
    assert "own-script" in "".join(p.read_text() for p in (tmp_path / "report").rglob("*.md"))
    code, out, err = mlab("view", scored_run, "--output", tmp_path / "page.html")
    assert code == 0 and "solution.py" in (tmp_path / "page.html").read_text(), err
    code, out, err = mlab("export", scored_run, "--to", "atif", "-o", tmp_path / "run.atif.json")
    assert code == 0, err
    atif = (tmp_path / "run.atif.json").read_text()
    assert "Predict y from x" in atif and "```python" in atif, "the exchanges are the trajectory's steps"
    code, out, err = mlab("export", scored_run, "--to", "inspect", "-o", tmp_path / "run.eval")
    assert code == 0, err


def test_mlab_list_shows_the_kind(tmp_path, tiny_task, monkeypatch):
    import shutil

    shutil.copytree(tiny_task.parent, tmp_path / "tasks")  # a local task file that uses std "external"
    monkeypatch.chdir(tmp_path)
    code, out, err = mlab("list", "--json")
    assert code == 0, err
    agents = {a["name"]: a for a in json.loads(out)["agents"]}
    assert agents["research"]["kind"] == "linear" and agents["tree-greedy"]["kind"] == "search"
    assert agents["mini-swe-agent"]["kind"] == "external" and agents["aide"]["reply_format"] == "external"
    code, out, err = mlab("list")
    line = next(line for line in out.splitlines() if line.strip().startswith("own-script"))
    assert "external" in line and "runs a command in the sandbox" in line


@needs_sandbox
def test_an_interrupted_external_run_resumes_by_restarting_the_agent(tmp_path, tiny_task, monkeypatch):
    from mlab.external.runner import ExternalRunner

    # the first script sleeps, so the stop lands while it runs, before a second call
    model = scripted(tmp_path, [code_reply("import time\ntime.sleep(5)\n"), code_reply(FIT_PY), "Done."])
    original = ExternalRunner.__init__

    def stop_after_one_call(self, run, client, **settings):
        original(self, run, client, **settings)
        self.should_stop = lambda: len(run.records) >= 1  # as a Ctrl-C right after the first exchange

    monkeypatch.setattr(ExternalRunner, "__init__", stop_after_one_call)
    code, out, err = mlab("run", tiny_task, "--agent", "own-script", "--model", model, "--runs-dir", tmp_path / "runs")
    run = only_run(tmp_path / "runs")
    assert code == 130 and not (run / "result.json").exists() and "--resume" in err
    monkeypatch.undo()
    code, out, err = mlab("run", "--resume", run)
    assert code == 0, (out, err, [(r["observation"][:300], r["end_reason"]) for r in trace(run)],
                       (run / "output" / "agent.log").read_text()[-2000:])
    document = result(run)
    assert document["success"] and document["model_calls"] == 3, "the calls of both sessions count"
    calls = [r for r in trace(run) if (r["model"] or {}).get("external")]
    assert len(calls[2]["model"]["request"]["messages"]) == 4, "the second session started a fresh conversation"


VALIDATOR = '''
agent checker external {
  command "{{ validate }}; echo exit=$?; python fit.py && {{ validate }}; echo exit=$?"
}
'''


@needs_sandbox
def test_the_sandbox_has_a_validate_submission_command(tmp_path, tiny_task):
    build = build_with(tmp_path, tiny_task, VALIDATOR)
    code, out, err = mlab("run", "tiny", "--build", build, "--agent", "checker", "--model", scripted(tmp_path, []),
                          "--runs-dir", tmp_path / "runs")
    run = only_run(tmp_path / "runs")
    log = (run / "output" / "agent.log").read_text()
    first, second = log.split("exit=", 1)[0], log.split("exit=", 1)[1]
    assert "submission.csv" in first and log.count("exit=1") == 1, log
    assert "submission.csv is valid" in second and "exit=0" in second, log
    assert result(run)["success"] is True


@needs_sandbox
def test_a_resume_never_writes_through_links_the_agent_left_in_the_workspace(tmp_path, tiny_task, monkeypatch):
    """Issue 41: problem.md (and the canary) replaced by links to host paths before the harness was
    killed; the resume rewrites them in the workspace and writes nothing outside it."""
    from mlab.external.runner import ExternalRunner

    host = tmp_path / "host"
    host.mkdir()
    plant = "".join(f"os.remove({name!r})\nos.symlink({str(host / name)!r}, {name!r})\n"
                    for name in ("problem.md", "CANARY.txt"))
    model = scripted(tmp_path, [code_reply(f"import os\n{plant}"), code_reply("import time\ntime.sleep(5)\n"),
                                code_reply(FIT_PY), "Done."])
    original = ExternalRunner.__init__

    def stop_after_one_call(self, run, client, **settings):
        original(self, run, client, **settings)
        self.should_stop = lambda: len(run.records) >= 2  # the links are in the workspace of the second call

    monkeypatch.setattr(ExternalRunner, "__init__", stop_after_one_call)
    code, out, err = mlab("run", tiny_task, "--agent", "own-script", "--model", model, "--runs-dir", tmp_path / "runs")
    run = only_run(tmp_path / "runs")
    assert code == 130, err
    monkeypatch.undo()
    assert (run / "workspace" / "problem.md").is_symlink()
    code, out, err = mlab("run", "--resume", run)
    assert list(host.iterdir()) == [], "nothing was written outside the workspace"
    assert code == 0, (out, err, (run / "output" / "agent.log").read_text()[-3000:])
    assert not (run / "workspace" / "problem.md").is_symlink()
    assert (run / "workspace" / "problem.md").read_text().startswith("# A tiny task")
    assert result(run)["success"]
