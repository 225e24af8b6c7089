"""Offline models (`mlab/...`) are answered by the model client itself: a run of them never imports
litellm (about 4 s of CPU a process), and what it records is what a provider's reply would give."""
import io
import json
import os
import subprocess
import sys

import pytest

from agent_helpers import only_run, result, trace, trace_problems
from tool_helpers import call, write_replies

POISON = "raise ImportError('litellm was imported by a run of offline models only')\n"


@pytest.fixture
def without_litellm(tmp_path):
    """An environment in which importing litellm fails loudly (a `litellm` package first on the path)."""
    folder = tmp_path / "poison"
    (folder / "litellm").mkdir(parents=True)
    (folder / "litellm" / "__init__.py").write_text(POISON)
    path = os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH", "")) if p)
    return dict(os.environ, PYTHONPATH=path)


def mlab_process(env, *args):
    done = subprocess.run([sys.executable, "-m", "mlab.cli", *map(str, args)], capture_output=True, text=True,
                          env=env, stdin=subprocess.DEVNULL, timeout=300)
    return done.returncode, done.stdout, done.stderr


def test_the_poisoned_path_does_fail_an_import_of_litellm(without_litellm):
    """The check below means something: in that environment, importing litellm is an error."""
    done = subprocess.run([sys.executable, "-c", "import mlab.models.client as c; c.import_litellm()"],
                          capture_output=True, text=True, env=without_litellm, timeout=120)
    assert done.returncode != 0 and "litellm was imported" in done.stderr


def test_a_tool_agent_run_of_a_scripted_model_and_its_replay_need_no_litellm(tiny_task, tmp_path, without_litellm):
    replies = [{"content": "Thought: look first",
                "tool_calls": [{"name": "list_files", "arguments": {"dir_path": "."}}]},
               call("execute_script", {"script_name": "fit.py"}, content=None),
               call("final_answer", {"final_answer": "fitted y = 2x + 1"})]
    model = write_replies(tmp_path, replies)
    code, out, err = mlab_process(without_litellm, "run", tiny_task, "--agent", "basic-tools", "--model", model,
                                  "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    assert "Traceback" not in out + err
    run_dir = only_run(tmp_path / "runs")
    records = trace(run_dir)
    assert [r["action"] for r in records] == ["List Files", "Execute Script", "Final Answer"]
    ids = [r["model"]["message"]["tool_calls"][0]["id"] for r in records]
    assert all(i.startswith("call_") for i in ids) and len(set(ids)) == 3  # made up per turn, each its own
    assert [r["model"]["tool_call"]["id"] for r in records] == ids
    calls = [c for r in records for c in r["model"]["calls"]]
    assert all(c["cost"] == 0.0 and c["usage_reported"] is False and c["prompt_tokens"] > 0 for c in calls)
    assert records[1]["model"]["message"]["content"] is None
    assert result(run_dir)["success"] is True and result(run_dir)["cost"] == 0.0
    assert trace_problems(run_dir) == []

    code, _, err = mlab_process(without_litellm, "run", tiny_task, "--agent", "basic-tools",
                                "--model", f"mlab/replay:{run_dir}", "--runs-dir", tmp_path / "again")
    assert code == 0, err
    again = trace(only_run(tmp_path / "again"))
    assert [r["model"]["message"] for r in again] == [r["model"]["message"] for r in records]


def test_an_offline_model_that_fails_oddly_ends_the_call_in_one_line(monkeypatch):
    """Not only its own RepliesExhausted: any fault of an offline model (here, input that is not
    UTF-8 for mlab/human) is a model failure said in one line, not a traceback."""
    from mlab.models.client import ModelClient, TierConfig
    from mlab.models.errors import ModelError

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"\xff\xfe not text\n.\n"), encoding="utf-8"))
    client = ModelClient({"main": TierConfig("mlab/human")})
    with pytest.raises(ModelError) as failed:
        client.complete("main", "what next?", purpose="step")
    said = str(failed.value)
    assert said.startswith("mlab/human failed after 1 attempt(s): ") and "can't decode byte 0xff" in said
    assert "\n" not in said
