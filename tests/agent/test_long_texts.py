"""Oversized inputs and outputs are stored once: a 10 MB Write File keeps its text in objects/, the
trace record holds a preview and a reference, the next prompt's history a bounded preview with a
note, and replay, resume and the viewer read the whole text back."""
import json

from agent_helpers import (interrupted_after_first_step, mlab, only_run, research_reply, result, scripted,
                           trace, trace_problems)

BIG = "".join(f"line {i:07d} of a big file\n" for i in range(400_000))  # 10.4 MB
REPLIES = [research_reply("Write File", {"file_name": "big.txt", "content": BIG}),
           research_reply("List Files", {"dir_path": "."}),
           research_reply("Final Answer", {"final_answer": "done"})]


def run_big(tiny_task, folder, monkeypatch=None):
    folder.mkdir(parents=True, exist_ok=True)
    model = scripted(folder, REPLIES)
    runs = folder / "runs"
    if monkeypatch is None:
        code, out, err = mlab("run", tiny_task, "--model", model, "--runs-dir", runs)
    else:
        code, out, err = interrupted_after_first_step(monkeypatch, tiny_task, "--model", model, "--runs-dir", runs)
        assert code == 130, err
        code, out, err = mlab("run", "--resume", only_run(runs))
    assert code in (0, 1), err
    assert "Traceback" not in out + err
    return only_run(runs)


def test_a_10_mb_write_file_makes_a_small_trace_record_and_a_bounded_next_prompt(tiny_task, tmp_path):
    run_dir = run_big(tiny_task, tmp_path)
    assert len(BIG) > 10_000_000
    assert (run_dir / "workspace" / "big.txt").read_text() == BIG
    lines = (run_dir / "trace.jsonl").read_bytes().splitlines()
    assert max(len(line) for line in lines) < 200_000  # was about 50 MB: input, validated input, reply x3
    assert (run_dir / "trace.jsonl").stat().st_size < 500_000
    first, second = trace(run_dir)[:2]
    from mlab.trace import TRACE_VERSION

    assert first["schema_version"] == TRACE_VERSION
    content = first["action_input"]["content"]
    assert len(content) < 5_000 and content.startswith("line 0000000 of a big file")
    assert f"{len(BIG) - 4000:,} of {len(BIG):,} characters not shown here" in content
    prompt = second["model"]["prompt"]
    assert len(prompt) < 30_000  # the history shows the preview, not 10 MB
    assert "characters not shown here; the whole text is part of the model's reply" in prompt
    assert "line 0000000 of a big file" in prompt
    assert trace_problems(run_dir) == []
    assert result(run_dir)["end_reason"] == "final_answer"
    objects = sum(p.stat().st_size for p in (run_dir / "objects").rglob("*") if p.is_file())
    assert objects < 2.2 * len(BIG)  # two objects: the written file (the input's text) and the reply


def test_the_whole_text_is_read_back_from_the_reference(tiny_task, tmp_path):
    from mlab.trace import full_record, full_text

    run_dir = run_big(tiny_task, tmp_path)
    first = trace(run_dir)[0]
    paths = [path for path, _, _ in first["stored"]]
    assert ["action_input", "content"] in paths and ["model", "calls", 0, "response"] in paths
    assert full_text(first, ["action_input", "content"], run_dir / "objects") == BIG
    whole = full_record(first, run_dir / "objects")
    assert whole["resolved"]["input"]["content"] == BIG and whole["model"]["response"] == REPLIES[0]
    assert "stored" not in whole


def test_replay_of_a_run_with_a_stored_reply_writes_the_whole_file(tiny_task, tmp_path):
    run_dir = run_big(tiny_task, tmp_path / "first")
    code, _, err = mlab("run", tiny_task, "--model", f"mlab/replay:{run_dir}", "--runs-dir", tmp_path / "again")
    assert code in (0, 1), err
    replayed = only_run(tmp_path / "again")
    assert (replayed / "workspace" / "big.txt").read_text() == BIG
    assert [r["action"] for r in trace(replayed)] == ["Write File", "List Files", "Final Answer"]


def test_resume_after_a_stored_input_sees_what_an_unstopped_run_saw(tiny_task, tmp_path, monkeypatch):
    whole = run_big(tiny_task, tmp_path / "whole")
    resumed = run_big(tiny_task, tmp_path / "resumed", monkeypatch)
    assert (resumed / "workspace" / "big.txt").read_text() == BIG
    prompts = [[r["model"]["prompt"] for r in trace(folder)] for folder in (whole, resumed)]
    assert prompts[0] == prompts[1]


def test_the_viewer_shows_a_stored_text_clipped(tiny_task, tmp_path):
    run_dir = run_big(tiny_task, tmp_path)
    code, _, err = mlab("view", run_dir, "--output", tmp_path / "page.html")
    assert code == 0, err
    page = (tmp_path / "page.html").read_text()
    assert len(page) < 1_000_000 and "line 0000000 of a big file" in page
    assert "line 0399999 of a big file" in page  # the tail comes from the whole text, not the preview
    json.loads((run_dir / "result.json").read_text())
