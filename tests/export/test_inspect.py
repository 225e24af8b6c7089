"""`mlab export RUN... --to inspect -o FILE.eval`: Inspect AI logs, one per (task, agent, model), read
back with Inspect's own read_eval_log."""
import builtins
import sys

import pytest

from agent_helpers import mlab, only_run
from export_helpers import copy_run, records, tool_agent_records, write_records
from needs import module

inspect_log = module("inspect_ai.log", "inspect-ai (a test extra: pip install -e '.[test]')")


@pytest.fixture(scope="module")
def second_seed(tiny_task, tmp_path_factory):
    """A second run of the research agent (seed 1), so one log holds two epochs."""
    folder = tmp_path_factory.mktemp("seed-1")
    code, out, err = mlab("run", tiny_task, "--agent", "research", "--model", "mlab/demo", "--seed", "1",
                          "--runs-dir", folder)
    assert code == 0, err + out
    return only_run(folder)


def test_runs_are_grouped_into_one_log_per_task_agent_and_model(std_runs, second_seed, tmp_path):
    out = tmp_path / "logs"
    code, stdout, err = mlab("export", std_runs["research"], second_seed, std_runs["simple"], "--to", "inspect",
                             "-o", out)
    assert code == 0, err
    names = sorted(p.name for p in out.iterdir())
    assert names == ["tiny_research_mlab-demo.eval", "tiny_simple_mlab-demo.eval"]
    assert f"wrote {out / names[0]}: Inspect log of tiny / research / mlab/demo, 2 sample(s)" in stdout
    log = inspect_log.read_eval_log(str(out / "tiny_research_mlab-demo.eval"), resolve_attachments=True)
    assert (log.status, log.eval.task, log.eval.model, log.eval.solver) == ("success", "tiny", "mlab/demo", "research")
    assert log.eval.config.epochs == 2
    assert [(s.id, s.epoch, s.metadata["seed"]) for s in log.samples] == [("lite", 1, 0), ("lite", 2, 1)]
    assert [s.metadata["run_id"] for s in log.samples] == [std_runs["research"].name, second_seed.name]
    for sample in log.samples:
        run_dir = std_runs["research"] if sample.metadata["seed"] == 0 else second_seed
        trace = records(run_dir)
        assert [m.role for m in sample.messages] == ["user"] + ["assistant", "tool"] * len(trace)
        assert sample.messages[0].text == trace[0]["model"]["prompt"]
        calls = [m.tool_calls[0] for m in sample.messages if m.role == "assistant"]
        assert [c.function for c in calls] == ["list_files", "execute_script", "final_answer"]
        results = [m for m in sample.messages if m.role == "tool"]
        assert [r.tool_call_id for r in results] == [c.id for c in calls] == ["mlab-step-1", "mlab-step-2",
                                                                              "mlab-step-3"]
        assert [r.text for r in results] == [r["observation"] for r in trace]
        # the transcript: each model call with the prompt it was sent, then the tool it ran
        assert [e.event for e in sample.events] == ["model", "tool"] * len(trace)
        assert sample.events[2].input[0].text == trace[1]["model"]["prompt"]
        assert sample.events[2].output.usage.input_tokens == trace[1]["model"]["calls"][0]["prompt_tokens"]
        assert (sample.events[3].function, sample.events[3].result) == ("execute_script", trace[1]["observation"])
        assert sample.scores["success"].value == "I"  # the demo model submits the starter's output
        assert sample.scores["score"].value == sample.metadata["result"]["score"]
        assert sample.scores["success"].answer == "The demo model ran the starter script unchanged."
        used = sum(u.input_tokens + u.output_tokens for u in sample.model_usage.values())
        assert used == sample.metadata["result"]["total_tokens"]
    assert log.results.total_samples == 2
    assert {s.name: list(s.metrics) for s in log.results.scores} == {"success": ["accuracy"], "score": ["mean"],
                                                                     "improvement": ["mean"]}


def test_one_group_goes_to_the_eval_file_named(std_runs, tmp_path):
    out = tmp_path / "run.eval"
    code, _, err = mlab("export", std_runs["react"], "--to", "inspect", "-o", out)
    assert code == 0, err
    log = inspect_log.read_eval_log(str(out))
    assert len(log.samples) == 1 and log.eval.solver == "react"
    code, _, err = mlab("export", std_runs["react"], std_runs["simple"], "--to", "inspect", "-o", tmp_path / "two.eval")
    assert code == 2 and "these runs make 2 Inspect logs" in err and "give -o DIR" in err
    assert not (tmp_path / "two.eval").exists()
    code, _, err = mlab("export", std_runs["react"], "--to", "inspect", "-o", out)
    assert code == 2 and "already exists" in err


def test_a_tool_agents_conversation_keeps_its_calls_results_and_reasoning(std_runs, tmp_path):
    run_dir = copy_run(std_runs["research"], tmp_path / "tools-run")
    write_records(run_dir, tool_agent_records(records(run_dir)))
    code, _, err = mlab("export", run_dir, "--to", "inspect", "-o", tmp_path / "tools.eval")
    assert code == 0, err
    sample = inspect_log.read_eval_log(str(tmp_path / "tools.eval")).samples[0]
    assert [m.role for m in sample.messages] == ["system", "user", "user", "assistant", "tool", "tool", "user",
                                                 "assistant", "tool", "tool"]
    assert sample.messages[-1].error.message == "Not run: one action per step."  # answered, not run
    assert [e.event for e in sample.events] == ["model", "tool", "tool", "model", "tool", "tool"]
    assert [m.role for m in sample.events[3].input] == [m.role for m in sample.messages[:7]]  # the conversation so far
    assistant = sample.messages[3]
    assert [(c.id, c.function, c.arguments) for c in assistant.tool_calls] == \
        [("call_A1", "list_files", {"dir_path": "."}), ("call_B2", "execute_script", {"script_name": "fit.py"})]
    assert [part.type for part in assistant.content] == ["reasoning", "text"]
    assert assistant.content[0].reasoning == "The files first; then the better model."
    assert [(m.tool_call_id, m.text) for m in sample.messages[4:6]][1] == ("call_B2", "(summary) wrote 4 predictions")


def test_every_std_agent_run_reads_back(std_runs, tmp_path):
    ran = {agent: run for agent, run in std_runs.items() if not isinstance(run, str)}
    holding = {run.parent.parent for run in ran.values()}  # the folder holding every run, given as one
    code, _, err = mlab("export", *holding, "--to", "inspect", "-o", tmp_path / "all")
    assert code == 0, err
    logs = {p.name: inspect_log.read_eval_log(str(p)) for p in (tmp_path / "all").iterdir()}
    assert set(ran) <= {log.eval.solver for log in logs.values()}
    for log in logs.values():
        sample = log.samples[0]
        assert sample.messages[-1].role == "tool" and sample.scores["success"].value in ("C", "I")


def test_without_inspect_ai_the_command_names_the_extra(std_runs, tmp_path, monkeypatch):
    real_import = builtins.__import__

    def no_inspect(name, *args, **kwargs):
        if name.startswith("inspect_ai"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    for name in [n for n in sys.modules if n.startswith("inspect_ai")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(builtins, "__import__", no_inspect)
    code, _, err = mlab("export", std_runs["simple"], "--to", "inspect", "-o", tmp_path / "x.eval")
    assert code == 2 and "--to inspect needs Inspect AI, which is not installed" in err
    assert "[inspect]" in err and "pip install" in err and "Traceback" not in err


def test_bad_runs_are_refused_before_anything_is_written(std_runs, tmp_path):
    torn = copy_run(std_runs["simple"], tmp_path / "torn")
    with open(torn / "trace.jsonl", "a") as handle:
        handle.write("{")
    code, _, err = mlab("export", std_runs["react"], torn, "--to", "inspect", "-o", tmp_path / "out")
    assert code == 1 and "not a complete record" in err
    assert not (tmp_path / "out").exists()
    code, _, err = mlab("export", tmp_path / "missing", "--to", "inspect", "-o", tmp_path / "out")
    assert code == 2 and "does not exist" in err
    (tmp_path / "nothing").mkdir()
    code, _, err = mlab("export", tmp_path / "nothing", "--to", "inspect", "-o", tmp_path / "out")
    assert code == 2 and "no run folders" in err
    code, _, err = mlab("export", std_runs["react"], "--to", "inspect")
    assert code == 2 and "give -o FILE.eval" in err


def test_an_unfinished_run_is_a_sample_with_an_error_and_no_scores(std_runs, tmp_path):
    run_dir = copy_run(std_runs["research"], tmp_path / "unfinished")
    (run_dir / "result.json").unlink()
    code, _, err = mlab("export", run_dir, "--to", "inspect", "-o", tmp_path / "u.eval")
    assert code == 0, err
    log = inspect_log.read_eval_log(str(tmp_path / "u.eval"))
    assert log.status == "error" and "1 run(s) have not finished" in log.error.message
    sample = log.samples[0]
    assert sample.scores is None and "has no result.json" in sample.error.message
    assert log.results.completed_samples == 0


def test_a_version_1_run_exports(tmp_path):
    import shutil
    from pathlib import Path

    v1 = Path(__file__).parent.parent / "agent" / "data" / "runs-v1" / "20261201T182227-d6c232"
    run_dir = shutil.copytree(v1, tmp_path / "run", ignore=shutil.ignore_patterns("workspace"))
    code, _, err = mlab("export", run_dir, "--to", "inspect", "-o", tmp_path / "v1.eval")
    assert code == 0, err
    log = inspect_log.read_eval_log(str(tmp_path / "v1.eval"))
    sample = log.samples[0]
    assert (log.eval.model, sample.id, sample.epoch, sample.metadata["seed"]) == ("mlab/demo", "lite", 1, 3)
    assert [m.role for m in sample.messages] == ["user"] + ["assistant", "tool"] * 3
    assert sample.scores["success"].value == "I" and sample.scores["score"].value == 8.5


def test_each_log_has_an_identity_inspect_view_keeps_apart(std_runs, second_seed, tmp_path):
    """Inspect View groups the logs of a folder by task_id and lists only the newest of each group
    (the others are taken for retries): every (task, agent, model) log needs its own task_id, and
    the agent must show in what the View lists (the task's display name, its arguments, tags)."""
    runs = [std_runs["research"], second_seed, std_runs["simple"], std_runs["react"]]
    logs = []
    for attempt in ("a", "b"):
        code, _, err = mlab("export", *runs, "--to", "inspect", "-o", tmp_path / attempt)
        assert code == 0, err
        logs.append({p.name: inspect_log.read_eval_log(str(p), header_only=True).eval
                     for p in sorted((tmp_path / attempt).iterdir())})
    first, again = logs
    assert len(first) == 3 and len({spec.task_id for spec in first.values()}) == 3   # none is a "retry"
    assert len({spec.eval_id for spec in first.values()}) == 3
    assert {name: spec.task_id for name, spec in first.items()} == {n: s.task_id for n, s in again.items()}
    research = first["tiny_research_mlab-demo.eval"]
    assert research.task == "tiny" and research.task_display_name == "tiny / research"
    assert research.task_args == {"agent": "research", "data": ["lite"], "seeds": [0, 1]}
    assert "agent:research" in research.tags and research.solver == "research"
    assert all(len(spec.task_id) == 22 and spec.task_id.isalnum() for spec in first.values())
