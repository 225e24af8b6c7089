"""Nothing a model or a script produces crashes the harness: each of these once ended a run with a
traceback and no result.json; now each ends with a result.json and a trace that reads back."""
import json
import os

import pytest

from agent_helpers import (interrupted_after_first_step, mlab, only_run, research_reply, result, scripted,
                           trace, trace_problems)
from fake_openai import FakeOpenAI
from mlab.tree import remove_tree

DONE = research_reply("Final Answer", {"final_answer": "done"})


def finished_cleanly(code: int, out: str, err: str, runs_dir) -> dict:
    assert code in (0, 1), err
    assert "Traceback" not in out + err
    run_dir = only_run(runs_dir)
    assert trace_problems(run_dir) == []
    return result(run_dir)


def test_a_lone_surrogate_in_an_action_input_is_refused_as_a_path_and_recorded(tiny_task, tmp_path):
    replies = [research_reply("Write File", {"file_name": "\udcff.py", "content": "x = '\udcff'\n"}), DONE]
    code, out, err = mlab("run", tiny_task, "--model", scripted(tmp_path, replies), "--runs-dir", tmp_path / "runs")
    document = finished_cleanly(code, out, err, tmp_path / "runs")
    assert document["end_reason"] == "final_answer"
    first = trace(only_run(tmp_path / "runs"))[0]
    assert first["action_input"]["file_name"] == "\udcff.py"  # recorded exactly as the model gave it
    assert first["status"] == "error" and "not valid UTF-8" in first["observation"]
    assert "\\udcff" in first["observation"]
    assert not any("\udcff" in p.name for p in (only_run(tmp_path / "runs") / "workspace").iterdir())


BAD_NAMES = "open(b'\\xff\\xfe.txt', 'w').write('odd name')\nprint('made it')\n"


def test_a_file_whose_name_is_not_utf8_is_snapshotted_and_survives_resume(tiny_task, tmp_path, monkeypatch):
    replies = [research_reply("Write File", {"file_name": "odd.py", "content": BAD_NAMES}),
               research_reply("Execute Script", {"script_name": "odd.py"}),
               research_reply("List Files", {"dir_path": "."}), DONE]
    model = scripted(tmp_path, replies)
    runs = tmp_path / "runs"
    code, _, err = interrupted_after_first_step(monkeypatch, tiny_task, "--model", model, "--runs-dir", runs)
    assert code == 130, err
    run_dir = only_run(runs)
    code, out, err = mlab("run", "--resume", run_dir)
    document = finished_cleanly(code, out, err, runs)
    assert document["end_reason"] == "final_answer"
    records = trace(run_dir)
    assert "made it" in records[1]["observation"]
    assert records[1]["snapshot"]["changed"].keys() >= {"\udcff\udcfe.txt"}  # os.fsdecode's spelling
    assert "\\udcff\\udcfe.txt" in records[2]["observation"]  # List Files shows the escaped name
    # the escaped name restores to the exact bytes
    from mlab.run.recovery import manifest_at
    from mlab.snapshots import ObjectStore, restore_files

    meta = json.loads((run_dir / "run.json").read_text())
    store = ObjectStore(run_dir / "objects")
    target = tmp_path / "checkout"
    restore_files(store, manifest_at(store, meta, records, 2), target)
    assert (target / b"\xff\xfe.txt".decode("utf-8", "surrogateescape")).read_text() == "odd name"
    assert b"\xff\xfe.txt" in os.listdir(os.fsencode(target))


def test_a_resumed_run_after_a_non_utf8_name_goes_on(tiny_task, tmp_path, monkeypatch):
    replies = [research_reply("Write File", {"file_name": "odd.py", "content": BAD_NAMES}),
               research_reply("Execute Script", {"script_name": "odd.py"}), DONE]
    runs = tmp_path / "runs"
    model = scripted(tmp_path, replies)
    from mlab.cli import run as run_command

    shown = run_command.Display.step

    def stop_after_the_script(self, record, observation, usage):
        shown(self, record, observation, usage)
        if record["step"] == 2:
            raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(run_command.Display, "step", stop_after_the_script)
        code, _, err = mlab("run", tiny_task, "--model", model, "--runs-dir", runs)
    assert code == 130, err
    code, out, err = mlab("run", "--resume", only_run(runs))
    assert finished_cleanly(code, out, err, runs)["end_reason"] == "final_answer"
    workspace = only_run(runs) / "workspace"
    assert b"\xff\xfe.txt" in os.listdir(os.fsencode(workspace))


@pytest.mark.parametrize("agent", ["research", "autogpt-style"])
def test_deeply_nested_json_in_a_reply_is_a_format_error(tiny_task, tmp_path, agent):
    deep = '{"a": ' * 5000 + "1" + "}" * 5000
    reply = f"Thought: t\nAction: List Files\nAction Input: {deep}\n" if agent == "research" else deep
    code, out, err = mlab("run", tiny_task, "--agent", agent, "--model", scripted(tmp_path, [reply] * 6),
                          "--runs-dir", tmp_path / "runs")
    document = finished_cleanly(code, out, err, tmp_path / "runs")
    assert document["failure_mode"] == "response format error"
    assert "nest" in document["detail"]


@pytest.fixture
def quick_retries(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("MLAB_MODEL_BACKOFF", "0")
    monkeypatch.setenv("MLAB_MODEL_TIMEOUT", "5")
    monkeypatch.setenv("MLAB_MODEL_ATTEMPTS", "3")


def test_a_response_with_no_choices_is_retried_as_a_model_fault(quick_retries, tiny_task, tmp_path):
    replies = [research_reply("Execute Script", {"script_name": "fit.py"}), DONE]
    with FakeOpenAI(replies, faults=["no choices"]) as server:
        code, out, err = mlab("run", tiny_task, "--model", "openai/gpt-4-turbo", "--api-base", server.base,
                              "--runs-dir", tmp_path / "runs")
    document = finished_cleanly(code, out, err, tmp_path / "runs")
    assert document["end_reason"] == "final_answer"
    assert trace(only_run(tmp_path / "runs"))[0]["model"]["calls"][0]["attempts"] == 2


def test_a_server_that_only_sends_empty_choices_ends_with_a_model_api_failure(quick_retries, tiny_task, tmp_path):
    with FakeOpenAI([DONE], faults=["no choices"] * 3) as server:
        code, out, err = mlab("run", tiny_task, "--model", "openai/gpt-4-turbo", "--api-base", server.base,
                              "--runs-dir", tmp_path / "runs")
    document = finished_cleanly(code, out, err, tmp_path / "runs")
    assert document["failure_mode"] == "model API failure"
    assert "no choices" in document["detail"]


DEEP_FOLDERS = """\
import os
for _ in range(1600):
    os.mkdir("d")
    os.chdir("d")
open("deep.txt", "w").write("bottom")
print("made 1600 folders")
"""


def test_1600_nested_folders_do_not_break_later_scripts(tiny_task, tmp_path, monkeypatch):
    replies = [research_reply("Write File", {"file_name": "deep.py", "content": DEEP_FOLDERS}),
               research_reply("Execute Script", {"script_name": "deep.py"}),
               research_reply("Execute Script", {"script_name": "fit.py"}), DONE]
    runs = tmp_path / "runs"
    try:
        code, _, err = interrupted_after_first_step(monkeypatch, tiny_task, "--model",
                                                    scripted(tmp_path, replies), "--runs-dir", runs)
        assert code == 130, err
        code, out, err = mlab("run", "--resume", only_run(runs))
        document = finished_cleanly(code, out, err, runs)
        records = trace(only_run(runs))
    finally:  # pytest's own clean-up of tmp_path recurses and would fail on this tree
        deep = only_run(runs) / "workspace" / "d"
        if deep.is_dir():
            remove_tree(deep)
    assert "made 1600 folders" in records[1]["observation"], records[1]["observation"]
    assert records[2]["status"] == "ok", records[2]["observation"]
    assert document["end_reason"] == "final_answer" and document["score"] is not None
    assert "/".join(["d"] * 1600) + "/deep.txt" in records[1]["snapshot"]["changed"]
