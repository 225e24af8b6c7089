"""What `mlab sweep` says when it is given something it cannot do."""
from __future__ import annotations

import textwrap

import pytest
from sweep_helpers import compile_build, write_tiny_task

from mlab.cli import main


@pytest.fixture
def gpu_experiment(tmp_path, sweep_env) -> str:
    write_tiny_task(tmp_path)
    text = (tmp_path / "tiny.mlab").read_text().replace("gpus 0", "gpus 2 required")
    (tmp_path / "tiny.mlab").write_text(text)
    (tmp_path / "exp.mlab").write_text(textwrap.dedent("""\
        use "tiny.mlab"
        experiment gpu-grid {
          tasks [tiny]
          agents [research]
          models ["mlab/demo"]
        }
        """))
    return str(compile_build(tmp_path / "exp.mlab", tmp_path / "build") / "experiments" / "gpu-grid.yaml")


def _fails(capsys, *argv: str) -> tuple[int, str]:
    code = main(["sweep", *argv])
    captured = capsys.readouterr()
    return code, captured.err


def test_an_unknown_experiment_names_the_known_ones(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, err = _fails(capsys, "no-such-experiment", "--plan")
    assert code == 2
    assert "mlab: no experiment named 'no-such-experiment' in " in err and "known: linear-vs-tree, paper-table, research-vs-tools, smoke" in err


def test_an_experiment_file_outside_a_build_is_refused(capsys, tmp_path):
    (tmp_path / "grid.yaml").write_text("name: grid\n")
    code, err = _fails(capsys, str(tmp_path / "grid.yaml"))
    assert code == 2 and "is not an experiment inside a build; expected BUILD/experiments/<name>.yaml" in err
    code, err = _fails(capsys, str(tmp_path / "missing.yaml"))
    assert code == 2 and "no such experiment file" in err


def test_required_gpus_need_devices(capsys, gpu_experiment):
    code, err = _fails(capsys, gpu_experiment, "--plan")
    assert code == 2 and "task tiny requires 2 GPU(s); give them with --devices 0,1,..." in err
    code, err = _fails(capsys, gpu_experiment, "--plan", "--devices", "0")
    assert code == 2 and "task tiny requires 2 GPU(s); only 1 given" in err
    assert main(["sweep", gpu_experiment, "--plan", "--devices", "0,1", "--runs-dir", "x"]) == 0
    assert " 2! " in capsys.readouterr().out  # the plan marks required GPUs


def test_options_of_the_other_executor_are_refused(capsys, gpu_experiment):
    code, err = _fails(capsys, gpu_experiment, "--address", "auto")
    assert code == 2 and "--address names a Ray cluster; use it with --executor ray" in err
    code, err = _fails(capsys, gpu_experiment, "--executor", "ray", "--devices", "0,1")
    assert code == 2 and "--devices is for the local executor" in err
    code, err = _fails(capsys, gpu_experiment, "--workers", "0", "--devices", "0,1")
    assert code == 2 and "--workers must be 1 or more" in err


def test_a_second_sweep_of_the_same_folder_is_refused(capsys, gpu_experiment, tmp_path):
    from mlab.sweeps.state import SweepFolder

    holder = SweepFolder(tmp_path / "runs" / "gpu-grid")
    holder.create()
    holder.lock()
    try:
        code, err = _fails(capsys, gpu_experiment, "--devices", "0,1", "--runs-dir", str(tmp_path / "runs"))
    finally:
        holder.unlock()
    assert code == 1 and "another `mlab sweep` is working in" in err


def test_the_plan_counts_a_tree_searchs_calls_per_node(capsys, tmp_path, sweep_env):
    """A node is one operator call (two with a review of the fast model), not a linear step's
    main call plus its share of helper calls."""
    import json

    write_tiny_task(tmp_path)
    (tmp_path / "exp.mlab").write_text(textwrap.dedent("""\
        use "tiny.mlab"
        agent tree-reviewed extends tree-greedy {
          search greedy { score review }
          prompts { review "Review {{ code_file }}: {{ output }}" }
        }
        experiment calls {
          tasks [tiny]
          agents [research, tree-greedy, tree-reviewed]
          models ["mlab/demo"]
          limits { steps 8 }
        }
        """))
    experiment = compile_build(tmp_path / "exp.mlab", tmp_path / "build") / "experiments" / "calls.yaml"
    assert main(["sweep", str(experiment), "--plan", "--json", "--runs-dir", str(tmp_path / "runs")]) == 0
    plan = json.loads(capsys.readouterr().out)
    calls = {run["agent"]: run["estimated_calls"] for run in plan["runs"]}
    assert calls == {"research": 10, "tree-greedy": 8, "tree-reviewed": 16}


TWO_EXPERIMENTS = """\
use "tiny.mlab"
experiment quick {
  tasks [tiny]
  agents [research]
  models ["mlab/demo"]
  limits { steps 4 }
}
experiment twice {
  tasks [tiny]
  agents [research, react]
  models ["mlab/demo"]
  runs 2
}
"""


def test_a_sweep_takes_a_mlab_file_as_mlab_run_does(capsys, tmp_path, sweep_env):
    """`mlab sweep FILE.mlab` runs the file's one experiment; `FILE.mlab:NAME` one of several."""
    import json

    write_tiny_task(tmp_path)
    (tmp_path / "one.mlab").write_text(TWO_EXPERIMENTS.split("experiment twice")[0])
    (tmp_path / "two.mlab").write_text(TWO_EXPERIMENTS)
    runs = ["--plan", "--json", "--runs-dir", str(tmp_path / "runs")]
    assert main(["sweep", str(tmp_path / "one.mlab"), *runs]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["experiment"] == "quick" and [(r["task"], r["agent"], r["steps"]) for r in plan["runs"]] == [
        ("tiny", "research", 4)]
    assert main(["sweep", f"{tmp_path / 'two.mlab'}:twice", *runs]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["experiment"] == "twice" and len(plan["runs"]) == 4
    assert main(["sweep", str(tmp_path / "two.mlab"), *runs]) == 2
    assert f"{tmp_path / 'two.mlab'} declares the experiments quick, twice; choose one with " \
           f"{tmp_path / 'two.mlab'}:NAME" in capsys.readouterr().err
    assert main(["sweep", f"{tmp_path / 'two.mlab'}:thrice", *runs]) == 2
    assert "declares no experiment 'thrice'; it declares: quick, twice" in capsys.readouterr().err
    assert main(["sweep", str(tmp_path / "missing.mlab"), *runs]) == 2
    assert "no such .mlab file:" in capsys.readouterr().err


def test_a_mistyped_experiment_gets_the_closest_name(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, err = _fails(capsys, "papre-table", "--plan")
    assert code == 2 and "no experiment named 'papre-table' (did you mean `paper-table`?) in " in err


PER_AGENT = """\
use "tiny.mlab"
experiment per-agent {
  tasks  [tiny]
  agents [research, tree-greedy]
  models ["mlab/demo"]
  limits { steps 10  time 20m }
  override tiny { limits { steps 12 } }
  override agent tree-greedy {
    limits { steps 4 }
  }
}
"""


def test_limits_per_agent_apply_to_that_agents_runs_only(capsys, tmp_path, sweep_env):
    """`override agent NAME { limits }` sets one agent's limits (a tree search counts nodes), over the
    experiment's and a task override's; the other agents keep theirs."""
    import json

    write_tiny_task(tmp_path)
    (tmp_path / "per-agent.mlab").write_text(PER_AGENT)
    assert main(["sweep", str(tmp_path / "per-agent.mlab"), "--plan", "--json",
                 "--runs-dir", str(tmp_path / "runs")]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert {run["agent"]: run["steps"] for run in plan["runs"]} == {"research": 12, "tree-greedy": 4}


def test_an_unknown_agent_in_a_per_agent_override_is_located(tmp_path):
    from mlabc.api import check_paths

    write_tiny_task(tmp_path)
    (tmp_path / "bad.mlab").write_text(PER_AGENT.replace("override agent tree-greedy", "override agent tree-gredy"))
    (diagnostic,) = check_paths([str(tmp_path / "bad.mlab")]).diagnostics
    assert diagnostic.code == "E304" and diagnostic.span.line == 8 and "tree-gredy" in diagnostic.message


def test_a_lite_only_task_of_the_users_is_skipped_with_a_line_and_left_alone_when_not_named(
        capsys, tmp_path, sweep_env, monkeypatch):
    # the bundled paper-table asks for data `full`; the user's own task in ./tasks has only `lite`
    write_tiny_task(tmp_path / "tasks")
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", "paper-table", "--plan", "--tasks", "house-price", "--runs-dir", "r"]) == 0
    out = capsys.readouterr().out
    assert "tiny" not in out and " house-price " in out and "wine-quality" not in out
    assert main(["sweep", "paper-table", "--plan", "--runs-dir", "r"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("skipped task tiny: it has no data variant 'full' (it declares: lite)\n")
    assert out.count("skipped task") == 1 and " house-price " in out
    code, err = _fails(capsys, "paper-table", "--plan", "--tasks", "tiny", "--runs-dir", "r")
    assert code == 2 and "expands to no runs (no task chosen has the data variant it asks for)" in err
