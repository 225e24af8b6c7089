"""mlabc new task: a scaffold that checks clean as made, runs, and tells what to fill in."""
from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys

import pandas as pd

from authoring_cases import TASKS


def test_new_task_checks_clean_and_is_formatted(tmp_path, mlabc):
    code, out, err = mlabc("new", "task", "my-task", cwd=tmp_path)
    assert code == 0
    assert out.splitlines() == [f"created tasks/{name}" for name in (
        "my-task/demo-steps.txt", "my-task/demo.json", "my-task/env/train.py", "my-task/lite/make_lite.py",
        "my-task/solution/train.py", "my-task.mlab", "my-task/lite/data.csv")]
    assert "fill in the TODOs" in err
    assert mlabc("check", "tasks/my-task.mlab", cwd=tmp_path)[:2] == (0, "ok: 3 files, 1 task, 14 agents, 0 experiments\n")
    assert mlabc("fmt", "--check", "tasks", cwd=tmp_path)[0] == 0
    text = (tmp_path / "tasks" / "my-task.mlab").read_text()
    assert text.count("TODO") >= 4 and "task my-task {" in text


def test_the_starter_runs_on_the_placeholder_data(tmp_path, mlabc):
    mlabc("new", "task", "toy", "--dir", str(tmp_path / "mine"))
    task = tmp_path / "mine" / "toy"
    table = pd.read_csv(task / "lite" / "data.csv")
    assert list(table.columns) == ["id", "x1", "x2", "x3", "y"] and len(table) == 300
    work = tmp_path / "work"
    work.mkdir()
    test = table.sample(frac=0.2, random_state=42)
    table.drop(test.index).to_csv(work / "train.csv", index=False)
    test.drop(columns=["y"]).to_csv(work / "test.csv", index=False)
    env = dict(os.environ, SCIKIT_LEARN_DATA=str(tmp_path / "sklearn"))
    result = subprocess.run([sys.executable, str(task / "env" / "train.py")], cwd=work, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Validation MAE: ")
    submission = pd.read_csv(work / "submission.csv")
    assert list(submission.columns) == ["id", "y"] and len(submission) == len(test)
    regenerated = tmp_path / "again.csv"
    runpy.run_path(str(task / "lite" / "make_lite.py"))["write"](regenerated)
    assert regenerated.read_text() == (task / "lite" / "data.csv").read_text()


def test_the_demo_stub_is_a_demonstration_any_agent_can_play(tmp_path, mlabc):
    mlabc("new", "task", "toy", "--dir", str(tmp_path))
    demo = json.loads((tmp_path / "toy" / "demo.json").read_text())
    assert (demo["format"], demo["version"]) == ("mlab-demonstration", 2)
    assert [step["action"] for step in demo["steps"]] == ["List Files", "Execute Script", "Write File",
                                                          "Execute Script", "Validate Submission", "Final Answer"]
    # built from the solution folder and the steps file, as `mlabc new demo` rebuilds it
    assert demo["steps"][2]["input"] == {"file_name": "train.py",
                                         "content": (tmp_path / "toy" / "solution" / "train.py").read_text()}
    assert demo["solution"] == "train.py"
    assert all(isinstance(step["input"], dict) and step["sections"]["thought"] for step in demo["steps"])


def test_new_task_from_an_existing_one(tmp_path, mlabc):
    code, out, _ = mlabc("new", "task", "prices", "--from", "house-price", cwd=tmp_path)
    assert code == 0 and "created tasks/prices.mlab" in out.splitlines()
    text = (tmp_path / "tasks" / "prices.mlab").read_text()
    assert "task prices {" in text and '"prices/env"' in text and '"house-price/' not in text
    assert "# 2,930 Ames sales" in text  # the template's comments come along
    assert (tmp_path / "tasks" / "prices" / "env" / "train.py").read_text() == \
        (TASKS / "house-price" / "env" / "train.py").read_text()
    code, out, err = mlabc("check", "tasks/prices.mlab", cwd=tmp_path)
    assert (code, err) == (0, "")


def test_new_task_from_a_task_of_the_folder_keeps_its_uses_working(tmp_path, mlabc):
    folder = tmp_path / "tasks"
    mlabc("new", "task", "first", cwd=tmp_path)
    (folder / "first.mlab").write_text((folder / "first.mlab").read_text().replace(
        'use std "agents"', 'use std "agents"\nuse "shared.mlab"'))
    (folder / "shared.mlab").write_text('use std "agents"\n\nagent quiet extends research {\n  history 1 steps\n}\n')
    (folder / "first.mlab").write_text((folder / "first.mlab").read_text().replace("agent      research",
                                                                                   "agent      quiet"))
    assert mlabc("check", "tasks", cwd=tmp_path)[0] == 0
    assert mlabc("new", "task", "second", "--from", "first", "--dir", "elsewhere", cwd=tmp_path)[0] == 0
    assert 'use "../tasks/shared.mlab"' in (tmp_path / "elsewhere" / "second.mlab").read_text()
    code, _, err = mlabc("check", "elsewhere/second.mlab", cwd=tmp_path)
    assert (code, err) == (0, "")


def test_new_task_refuses_bad_names_and_existing_files(tmp_path, mlabc):
    code, _, err = mlabc("new", "task", "My Task", cwd=tmp_path)
    assert code == 2 and "'My Task' cannot name a task" in err
    assert mlabc("new", "task", "twice", cwd=tmp_path)[0] == 0
    code, _, err = mlabc("new", "task", "twice", cwd=tmp_path)
    assert code == 3 and "tasks/twice.mlab already exists" in err
    code, _, err = mlabc("new", "task", "copy", "--from", "no-such-task", cwd=tmp_path)
    assert code == 2 and "no task named 'no-such-task'" in err
