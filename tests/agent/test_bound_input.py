"""An action that binds its primitive's input to a constant (`does execute_script(script_name =
"run_tests.py")`): the agent calls it with no input, the bound script runs, and the prompt's tool
description offers no such input."""
from agent_helpers import TASK_SOURCE, actions_taken, mlab, only_run, research_reply, scripted, trace, write_tiny_task

RUN_TESTS_PY = 'print("all 3 tests passed")\n'

# the starter's script writes a valid submission, so that each run ends with a score
SUBMIT = [research_reply("Execute Script", {"script_name": "train.py"}),
          research_reply("Final Answer", {"final_answer": "the tests pass"})]

LAB_SOURCE = """
actions lab extends core {
  action "Run Tests" {
    describe "Run the task's tests on the current solution."
    returns  "the output of the tests"
    does     execute_script(script_name = "run_tests.py")
  }
}

agent tester extends research {
  actions lab
  show ["List Files", "Execute Script", "Run Tests", "Final Answer"]
}
"""


def test_an_action_with_a_bound_input_runs_its_script_without_input(tmp_path):
    source = write_tiny_task(tmp_path / "task")
    (tmp_path / "task" / "env" / "run_tests.py").write_text(RUN_TESTS_PY)
    source.write_text(TASK_SOURCE + LAB_SOURCE)
    replies = [research_reply("Run Tests", {})] + SUBMIT
    code, out, err = mlab("run", source, "--agent", "tester", "--model", scripted(tmp_path, replies),
                          "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    run_dir = only_run(tmp_path / "runs")
    assert [(action, status) for action, _, status in actions_taken(run_dir)][0] == ("Run Tests", "ok")
    first = trace(run_dir)[0]
    assert "all 3 tests passed" in first["observation"]
    tools = first["model"]["prompt"].split("Research problem:")[0]
    assert "Run Tests" in tools and "Execute Script" in tools
    run_tests = tools[tools.index("Run Tests"):]
    run_tests = run_tests[:run_tests.index("Final Answer")] if "Final Answer" in run_tests else run_tests
    assert "script_name" not in run_tests, run_tests


def test_the_agent_cannot_give_the_bound_input(tmp_path):
    source = write_tiny_task(tmp_path / "task")
    (tmp_path / "task" / "env" / "run_tests.py").write_text(RUN_TESTS_PY)
    source.write_text(TASK_SOURCE + LAB_SOURCE)
    replies = [research_reply("Run Tests", {"script_name": "train.py"})] + SUBMIT
    code, out, err = mlab("run", source, "--agent", "tester", "--model", scripted(tmp_path, replies),
                          "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    first = trace(only_run(tmp_path / "runs"))[0]
    assert first["status"] != "ok"
    assert "unknown field 'script_name' (this action takes: nothing)" in first["observation"]
