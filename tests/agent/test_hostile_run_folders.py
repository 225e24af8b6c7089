"""Issue 41: a run folder from elsewhere is hostile data. Every JSON it holds is decoded within bounds
and checked, special files are refused without blocking, what it holds is printed through the one
printable filter, nothing in it is run, and `--reproduce` compares the build copy with the build it
recompiles and never trusts a forged result.json."""
from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from agent_helpers import mlab, only_run, research_reply, scripted, write_tiny_task

REPLIES = [research_reply("Execute Script", {"script_name": "fit.py"}),
           research_reply("Final Answer", {"final_answer": "submitted"})]
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile-folders")
    source = write_tiny_task(folder / "task")
    code, out, err = mlab("run", source, "--model", scripted(folder, REPLIES), "--runs-dir", folder / "runs")
    assert code == 0, err
    return only_run(folder / "runs")


@pytest.fixture
def copy(finished, tmp_path):
    """A copy of the finished run, to spoil (in a runs folder of its own)."""
    target = tmp_path / "runs" / finished.name
    shutil.copytree(finished, target, symlinks=True)
    return target


def no_traceback(code: int, out: str, err: str) -> None:
    assert code in (0, 1, 2, 3), (code, out, err)
    assert "Traceback" not in out + err and "RecursionError" not in out + err


def test_lock_check_runs_nothing_the_folder_names_and_prints_no_control_sequences(copy, tmp_path):
    marker = tmp_path / "ran"
    program = copy / "python"
    program.write_text(f"#!/bin/sh\ntouch {marker}\n")
    program.chmod(0o755)
    lock = json.loads((copy / "lock.json").read_text())
    lock["hardware"]["scripts_python"] = str(program)
    lock["packages"]["requires:numpy"] = "\x1b]0;owned\x07\x1b]52;c;ZWNobyBvd25lZA==\x07\x1b[2J1.0"
    (copy / "lock.json").write_text(json.dumps(lock))
    code, out, err = mlab("lock", "--check", copy)
    assert code == 1 and "would not reproduce the run exactly" in out
    assert not marker.exists(), "the program the lock names was run"
    assert "\x1b" not in out + err and "\\x1b]52" in out
    assert f"scripts python" in out and str(program) in out, "the recorded interpreter is compared as data"


def run_briefly(*args, seconds: float = 60):
    """mlab ARGS in a thread: its answer, or None when it is still running after `seconds` (blocked)."""
    answer = []
    worker = threading.Thread(target=lambda: answer.append(mlab(*args)), daemon=True)
    worker.start()
    worker.join(seconds)
    return answer[0] if answer else None


@pytest.mark.parametrize("name", ["result.json", "run.json", "lock.json", "budgets.json", "trace.jsonl", "summary.json"])
def test_a_named_pipe_in_a_run_folder_is_refused_without_blocking(copy, tmp_path, name):
    (copy / name).unlink(missing_ok=True)
    os.mkfifo(copy / name)
    for args in (("eval", copy), ("lock", "--check", copy), ("report", copy.parent, "-o", tmp_path / "report"),
                 ("export", copy, "--to", "mle-bench", "-o", tmp_path / "export.csv")):
        answer = run_briefly(*args)
        assert answer is not None, f"mlab {args[0]} blocked on a named pipe {name}"
        no_traceback(*answer)


COMMANDS = {
    "lock --check": lambda run, out: ("lock", "--check", run),
    "run --reproduce": lambda run, out: ("run", "--reproduce", run, "--replay", "--runs-dir", out / "again"),
    "eval": lambda run, out: ("eval", run),
    "eval --at": lambda run, out: ("eval", run, "--at", "time=50%"),
    "report": lambda run, out: ("report", run.parent, "-o", out / "report"),
    "view": lambda run, out: ("view", run, "--output", out / "page.html"),
    "export mle-bench": lambda run, out: ("export", run, "--to", "mle-bench", "-o", out / "medals.csv"),
    "run --resume": lambda run, out: ("run", "--resume", run),
}


# the commands that cannot go on without the file, and say what is wrong with it
SAYS_WHY = {"lock.json": ("lock --check", "run --reproduce"), "result.json": ("eval", "report", "view"),
            "run.json": ("eval", "eval --at", "report", "view", "run --resume"),
            "build/manifest.json": ("run --reproduce", "run --resume")}


@pytest.mark.parametrize("name", ["lock.json", "result.json", "run.json", "budgets.json", "trace.jsonl",
                                  "models.json", "build/manifest.json"])
def test_a_json_nested_100000_deep_is_a_message_in_every_command(copy, tmp_path, name):
    if name == "trace.jsonl":
        with open(copy / name, "a") as trace:
            trace.write(DEEP + "\n")
    else:
        (copy / name).write_text(DEEP)
    for command, args in COMMANDS.items():
        if command == "run --resume":
            (copy / "result.json").unlink(missing_ok=True)
        code, out, err = mlab(*args(copy, tmp_path / command.replace(" ", "_")))
        assert "Traceback" not in out + err and "RecursionError" not in out + err, (command, out, err)
        if command in SAYS_WHY.get(name, ()):
            assert "levels deep" in out + err, (command, out, err)


def test_a_reproduction_of_an_edited_build_copy_with_a_forged_result_is_a_difference(copy, tmp_path):
    task_yaml = copy / "build" / "tasks" / "tiny" / "task.yaml"
    task_yaml.write_text(task_yaml.read_text().replace("direction: lower_is_better", "direction: higher_is_better"))
    code, out, err = mlab("run", "--reproduce", copy, "--replay", "--runs-dir", tmp_path / "first")
    again = json.loads((only_run(tmp_path / "first") / "result.json").read_text())
    forged = json.loads((copy / "result.json").read_text())
    forged.update({key: again[key] for key in ("score", "success", "failure_mode", "improvement")})
    (copy / "result.json").write_text(json.dumps(forged))
    code, out, err = mlab("run", "--reproduce", copy, "--replay", "--runs-dir", tmp_path / "second")
    assert "no differences" not in out, out
    assert "build copy tasks/tiny/task.yaml" in out, out


def test_a_forged_score_is_not_taken_over_the_rescored_one(copy, tmp_path):
    forged = json.loads((copy / "result.json").read_text())
    forged.update(score=-5.0, success=True)
    (copy / "result.json").write_text(json.dumps(forged))
    code, out, err = mlab("run", "--reproduce", copy, "--replay", "--runs-dir", tmp_path / "again")
    assert "score in result.json" in out and "-5" in out, out


def test_report_and_the_mle_bench_export_leave_out_forged_results_saying_why(finished, tmp_path):
    runs = tmp_path / "runs"
    forged = {"list": lambda doc: "[1, 2, 3]", "nan": lambda doc: json.dumps({**doc, "score": float("nan")}),
              "infinity": lambda doc: json.dumps({**doc, "score": float("inf"), "success": True}),
              "direction": lambda doc: json.dumps({**doc, "direction": "sideways"}),
              "flipped": lambda doc: json.dumps({**doc, "direction": "higher_is_better", "score": 1e9})}
    for name, forge in forged.items():
        shutil.copytree(finished, runs / name, symlinks=True)
        doc = json.loads((runs / name / "result.json").read_text())
        (runs / name / "result.json").write_text(forge(doc))
    shutil.copytree(finished, runs / "honest", symlinks=True)
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe")
    for folder in runs.iterdir():   # medal thresholds for the tiny task, in every copy's build
        task_yaml = folder / "build" / "tasks" / "tiny" / "task.yaml"
        doc = yaml.load(task_yaml.read_text())
        doc["references"] = {"points": [], "thresholds": {"gold": 0.5, "silver": 1.0, "bronze": 2.0, "median": 3.0,
                                                          "source": "a test"}}
        with task_yaml.open("w") as stream:
            yaml.dump(doc, stream)
        meta = json.loads((folder / "run.json").read_text())
        meta["build"]["digest"] = "7" * 64   # build documents are cached per digest: this build is another
        (folder / "run.json").write_text(json.dumps(meta))
    code, out, err = mlab("report", runs, "-o", tmp_path / "report")
    no_traceback(code, out, err)
    assert code == 0, err
    for name in ("list", "nan", "infinity", "direction"):
        assert f"left out {runs / name}" in err, err
    assert "is not a JSON object" in err and "NaN" in err and "Infinity" in err and "sideways" in err
    # a valid direction that is not the task's: left out of every figure, and the report says why
    reported = (tmp_path / "report" / "runs.csv").read_text()
    assert "higher_is_better" not in reported and reported.count("\n") == 2, reported  # header + the honest run
    assert "left out flipped: result.json's metric direction (higher_is_better) is not the task's" in \
        (tmp_path / "report" / "report.md").read_text()
    code, out, err = mlab("export", runs, "--to", "mle-bench", "-o", tmp_path / "medals.json")
    no_traceback(code, out, err)
    report = json.loads((tmp_path / "medals.json").read_text())
    graded = {Path(r["submission_path"]).parent.parent.name for r in report["competition_reports"]}
    assert graded <= {"honest"}, f"forged results were graded: {graded}"
    reasons = " ".join(s["reason"] for s in report["mlab"]["skipped"])
    assert "is not the task's" in reasons


def test_a_budgets_json_of_the_wrong_shape_or_with_forged_points_is_measured_again(copy):
    code, out, err = mlab("eval", copy, "--at", "time=50%", "--json")
    assert code == 0, err
    measured = json.loads(out)
    budgets = json.loads((copy / "budgets.json").read_text())
    for point in budgets["points"].values():
        point.update(score=12345.0, success=True, status="scored")
    (copy / "budgets.json").write_text(json.dumps(budgets))
    code, out, err = mlab("eval", copy, "--at", "time=50%", "--json")
    assert code == 0, err
    assert "12345" not in out and json.loads(out) == measured, "a forged point was taken as measured"
    (copy / "budgets.json").write_text(json.dumps({"version": 1, "snapshots": "ab", "points": [1, 2]}))
    code, out, err = mlab("eval", copy, "--at", "time=50%", "--json")
    no_traceback(code, out, err)
    assert code == 0 and json.loads(out) == measured


def test_view_of_tool_call_arguments_nested_100000_deep_in_a_trace(copy, tmp_path):
    """A trace line within the bounds whose tool-call arguments are a string of JSON nested 100,000
    deep: the page shows them as sent, without decoding them."""
    from mlab.trace import read_trace

    records = read_trace(copy / "trace.jsonl").records
    records[0]["model"] = {**(records[0].get("model") or {}),
                           "tool_call": {"id": "call-1", "name": "Execute Script", "arguments": DEEP}}
    (copy / "trace.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    code, out, err = mlab("view", copy, "--output", tmp_path / "page.html")
    no_traceback(code, out, err)
    assert code == 0 and "[[[[" in (tmp_path / "page.html").read_text()


# A trace line of the wrong shape, in the second record (the Final Answer step), and what is wrong with it
FORGED_RECORDS = {
    "tokens a string": (lambda r: r["model"]["calls"][0].update(prompt_tokens="many"),
                        "model.calls[0].prompt_tokens is a string, not integer"),
    "no step number": (lambda r: r.pop("step") and None, "it has no step"),
    "a list": (lambda r: [1, 2, 3], "it is a list, not an object"),
    "a snapshot outside the store": (lambda r: r["snapshot"]["changed"].update({"x.csv": "../../../../etc/passwd"}),
                                     "snapshot.changed.x.csv is not of the form"),
    "an unknown status": (lambda r: r.update(status=["final"]), "status is a list, not one of 'ended', 'error'"),
    "a newer version": (lambda r: r.update(schema_version=99), "schema_version is 99"),
}
TRACE_READERS = {**{name: args for name, args in COMMANDS.items() if name != "run --resume"},
                 "eval --intermediate": lambda run, out: ("eval", "--intermediate", run),
                 "export atif": lambda run, out: ("export", run, "--to", "atif", "-o", out / "atif.json"),
                 "export inspect": lambda run, out: ("export", run, "--to", "inspect", "-o", out / "log.json"),
                 "checkout": lambda run, out: ("checkout", run, "--step", "1", out / "checkout"),
                 "run --resume": COMMANDS["run --resume"]}   # last: it moves the forged record aside


def forge_trace(run: Path, forge) -> None:
    lines = (run / "trace.jsonl").read_text().splitlines()
    record = json.loads(lines[1])
    replaced = forge(record)
    lines[1] = json.dumps(record if replaced is None else replaced)
    (run / "trace.jsonl").write_text("".join(line + "\n" for line in lines))


def test_a_trace_record_of_the_wrong_shape_is_named_by_every_reader(copy, tmp_path):
    """Each command that reads the trace reads it up to a record of the wrong shape (token counts that
    are a string: `mlab eval` raised ValueError adding them up) and says once which file and line it
    left out and why; an export refuses the trace; a resume sets the record aside in the .torn file.
    Never a traceback, never a record used as if whole."""
    forge, why = FORGED_RECORDS["tokens a string"]
    forge_trace(copy, forge)
    said = f"{copy / 'trace.jsonl'} line 2 is not a trace record: "
    for command, args in TRACE_READERS.items():
        out_dir = tmp_path / command.replace(" ", "_")
        out_dir.mkdir()
        if command == "run --resume":
            (copy / "result.json").unlink(missing_ok=True)
        code, out, err = mlab(*args(copy, out_dir))
        no_traceback(code, out, err)
        if command.startswith("export") and command != "export mle-bench":
            assert code == 1 and said in err and why in err and "nothing is exported from a damaged trace" in err
        elif command not in ("lock --check", "export mle-bench"):   # neither reads the trace
            assert err.count(said) == 1 and why in err, (command, code, out, err)
        if command == "run --resume":
            assert "it and the lines after it are moved to trace.jsonl.torn" in err, err
            assert '"prompt_tokens": "many"' in (copy / "trace.jsonl.torn").read_text(), "the record is kept aside"
            assert code == 0 and json.loads((copy / "result.json").read_text())["steps"] == 2, "the step was made again"


@pytest.mark.parametrize("forgery", list(FORGED_RECORDS))
def test_each_wrong_shape_of_a_trace_record_is_said(copy, tmp_path, forgery, monkeypatch):
    from mlab import cache

    monkeypatch.setattr(cache, "SETTLED_S", -1.0)   # the forged trace need not be two seconds old to be remembered
    forge, why = FORGED_RECORDS[forgery]
    forge_trace(copy, forge)
    # eval twice: the second takes what the first remembered of the trace (report facts), and says it too
    for args in (("eval", copy, "--json"), ("eval", copy, "--json"), ("view", copy, "--output", tmp_path / "page.html")):
        code, out, err = mlab(*args)
        no_traceback(code, out, err)
        assert code == 0 and f"{copy / 'trace.jsonl'} line 2 is not a trace record: {why}" in err, (args, err)
    assert "passwd" not in (tmp_path / "page.html").read_text()


def test_a_scores_row_of_the_wrong_shape_is_named_by_every_reader(copy, tmp_path):
    """scores.jsonl is read up to a row of the wrong shape (a score that is a string: the report's
    best step raised TypeError on it), saying which file and line; `eval --intermediate` writes it
    whole again."""
    code, out, err = mlab("eval", "--intermediate", copy)
    assert code == 0, err
    lines = (copy / "scores.jsonl").read_text().splitlines()
    row = json.loads(lines[1])
    lines[1] = json.dumps({**row, "score": "high"})
    (copy / "scores.jsonl").write_text("".join(line + "\n" for line in lines))
    said = f"{copy / 'scores.jsonl'} line 2 is not a row of scores: score is a string, not number or null"
    for args in (("eval", copy), ("report", copy.parent, "-o", tmp_path / "report"),
                 ("view", copy, "--output", tmp_path / "page.html"), ("export", copy, "--to", "atif", "-o",
                                                                      tmp_path / "atif.json")):
        code, out, err = mlab(*args)
        no_traceback(code, out, err)
        assert code == 0 and err.count(said) == 1, (args, err)
    code, out, err = mlab("eval", "--intermediate", copy)
    assert code == 0, err
    assert '"high"' not in (copy / "scores.jsonl").read_text(), "the row was not scored again"


def test_a_forged_build_copy_reads_as_a_missing_one_in_every_reader(copy, tmp_path):
    """A task.yaml, agent.json and actions.json of the wrong shapes (a number where a list is, a word
    where a number is, a list where a name is) make no view: reports, the viewer and the exports go
    on as for a missing copy."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe")
    task_yaml = copy / "build" / "tasks" / "tiny" / "task.yaml"
    doc = yaml.load(task_yaml.read_text())
    doc["issues"] = [{"text": "a forged issue", "since": "soon", "fixed": "never"}]
    doc["references"] = {"thresholds": {"gold": "gold", "source": 5}, "leaderboard": {"scores": "many"}}
    doc["metric"] = {**doc["metric"], "direction": ["up"]}
    with task_yaml.open("w") as stream:
        yaml.dump(doc, stream)
    agent_json = copy / "build" / "agents" / "research" / "agent.json"
    agent = json.loads(agent_json.read_text())
    agent.update(reply={"format": 7, "sections": "none", "fallback": 3}, search={"select": ["x"]})
    agent_json.write_text(json.dumps(agent))
    actions_json = copy / "build" / "agents" / "research" / "actions.json"
    table = json.loads(actions_json.read_text())
    for action in table["actions"]:
        action.update(name=[action["name"]], tool_name=7)   # a list where a name is, a number where a tool name is
    actions_json.write_text(json.dumps(table))
    meta = json.loads((copy / "run.json").read_text())
    meta["build"]["digest"] = "8" * 64   # build documents are cached per digest: this build is another
    (copy / "run.json").write_text(json.dumps(meta))
    for args in (("report", copy.parent, "-o", tmp_path / "report"), ("view", copy, "--output", tmp_path / "p.html"),
                 ("export", copy, "--to", "mle-bench", "-o", tmp_path / "medals.json"),
                 ("export", copy, "--to", "atif", "-o", tmp_path / "atif"),
                 ("export", copy, "--to", "inspect", "-o", tmp_path / "inspect"),
                 ("eval", copy, "--at", "time=50%")):
        code, out, err = mlab(*args)
        no_traceback(code, out, err)
    assert "a forged issue" not in (tmp_path / "p.html").read_text()   # the forged known issue is not shown
    # the exports name each step's action as the agent gave it, as for a run without a build copy
    trajectory = json.loads((tmp_path / "atif").read_text())
    called = [call["function_name"] for step in trajectory["steps"] for call in step.get("tool_calls") or ()]
    assert called == ["Execute Script", "Final Answer"], called   # not execute_script: the forged table is unread
    assert "tool_definitions" not in trajectory["agent"]
