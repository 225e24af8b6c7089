"""`mlabc new demo SOLUTION_DIR [--steps FILE] [-o FILE]`: a demonstration built from a solution
folder and a list of steps, with no code escaped into JSON by hand."""
from __future__ import annotations

import json

STEPS = """\
# look, put the solution in place, run it, finish
List Files . -- See what the workspace holds.
Write File train.py -- Put the solution in place.
Execute Script train.py
Inspect Script Lines train.py 1 2
Describe Table {"file_name": "train.csv"}
Final Answer Trained the solution and wrote submission.csv.
"""
SOLUTION = 'import pandas as pd\nprint("Validation score: 0.5")  # "quotes" and \\ backslashes\n'


def test_the_steps_become_a_version_2_demonstration_with_the_solutions_code(tmp_path, mlabc):
    (tmp_path / "solution").mkdir()
    (tmp_path / "solution" / "train.py").write_text(SOLUTION)
    (tmp_path / "steps.txt").write_text(STEPS)
    code, out, err = mlabc("new", "demo", "solution", "--steps", "steps.txt", cwd=tmp_path)
    assert (code, err) == (0, "") and out == "wrote demo.json (6 steps)\n"
    demo = json.loads((tmp_path / "demo.json").read_text())
    assert (demo["format"], demo["version"], demo["solution"]) == ("mlab-demonstration", 2, "train.py")
    assert [(s["action"], s["input"]) for s in demo["steps"]] == [
        ("List Files", {"dir_path": "."}), ("Write File", {"file_name": "train.py", "content": SOLUTION}),
        ("Execute Script", {"script_name": "train.py"}),
        ("Inspect Script Lines", {"script_name": "train.py", "start_line_number": 1, "end_line_number": 2}),
        ("Describe Table", {"file_name": "train.csv"}),
        ("Final Answer", {"final_answer": "Trained the solution and wrote submission.csv."})]
    assert demo["steps"][0]["sections"] == {"thought": "See what the workspace holds."}


def test_without_steps_it_writes_runs_validates_and_finishes(tmp_path, mlabc):
    (tmp_path / "solution").mkdir()
    (tmp_path / "solution" / "train.py").write_text(SOLUTION)
    assert mlabc("new", "demo", "solution", "-o", "out.json", cwd=tmp_path)[0] == 0
    demo = json.loads((tmp_path / "out.json").read_text())
    assert [s["action"] for s in demo["steps"]] == ["List Files", "Write File", "Execute Script",
                                                   "Validate Submission", "Final Answer"]


def test_a_step_that_cannot_be_built_is_one_located_line(tmp_path, mlabc):
    (tmp_path / "solution").mkdir()
    (tmp_path / "steps.txt").write_text("List Files .\nWrite File missing.py\n")
    code, out, err = mlabc("new", "demo", "solution", "--steps", "steps.txt", cwd=tmp_path)
    assert code == 2 and out == ""
    assert err == "mlabc new demo: steps.txt:2: the solution folder solution has no file 'missing.py' to write\n"
    (tmp_path / "steps.txt").write_text("Execute Script a.py b.py\n")
    assert "steps.txt:1: Execute Script takes 1 value(s), found 2" in mlabc(
        "new", "demo", "solution", "--steps", "steps.txt", cwd=tmp_path)[2]
    assert "no Python file; give the steps with --steps" in mlabc("new", "demo", "solution", cwd=tmp_path)[2]
