"""mlab.gym: a task and an action table as a Gymnasium environment whose episodes are runs."""
from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

gymnasium = pytest.importorskip("gymnasium", reason="mlab.gym needs the optional extra `gym` (gymnasium)")
from gymnasium.utils.env_checker import check_env  # noqa: E402

from agent_helpers import result, trace  # noqa: E402
from mlab.gym import MlabEnv, make  # noqa: E402

EXECUTE = {"action": "Execute Script", "input": {"script_name": "fit.py"}}
FINAL = {"action": "Final Answer", "input": {"final_answer": "fit.py wrote submission.csv"}}


def test_the_environment_passes_gymnasiums_checker(tmp_path, tiny_task):
    env = make(str(tiny_task), runs_dir=tmp_path / "runs", limits={"steps": 40})
    check_env(env, skip_render_check=True)
    env.close()


def test_a_bad_action_is_an_observation_and_a_scripted_episode_wins(tmp_path, tiny_task):
    env = gymnasium.make("mlab/Task-v0", task=str(tiny_task), runs_dir=str(tmp_path / "runs"))
    observation, info = env.reset(seed=3)
    assert "Predict y from x" in observation and "fit.py" in observation and "Final Answer" in info["actions"]
    observation, reward, terminated, truncated, info = env.step({"action": "Execute Script", "input": {"nope": 1}})
    assert "script_name" in observation and reward == 0.0 and not (terminated or truncated)
    observation, reward, terminated, truncated, info = env.step({"action": "Fly", "input": "{}"})
    assert "Fly" in observation and not terminated
    env.step(EXECUTE)
    observation, reward, terminated, truncated, info = env.step(FINAL)
    assert terminated and not truncated
    run = env.unwrapped.run_dir
    document = result(run)
    assert reward == pytest.approx(document["improvement"]) and reward > 0.5 and document["success"]
    assert [r["status"] for r in trace(run)][-1] == "final" and len(trace(run)) == 4
    env.close()


def test_the_step_limit_truncates(tmp_path, tiny_task):
    env = MlabEnv(str(tiny_task), runs_dir=tmp_path / "runs", limits={"steps": 1})
    env.reset()
    ended = None
    for _ in range(5):
        observation, reward, terminated, truncated, info = env.step({"action": "List Files", "input": {"dir_path": "."}})
        if terminated or truncated:
            ended = (terminated, truncated)
            break
    assert ended == (False, True) and info["result"]["end_reason"] == "steps_limit"
    env.close()


def _episode(task: str, runs_dir: str, seed: int) -> dict:
    env = make(task, runs_dir=runs_dir)
    env.reset(seed=seed)
    env.step(EXECUTE)
    *_, info = env.step(FINAL)
    env.close()
    return {"run_dir": str(env.run_dir), "success": info["result"]["success"], "seed": info["result"]["seed"]}


def test_environments_run_in_parallel_processes(tmp_path, tiny_task):
    with ProcessPoolExecutor(max_workers=2) as pool:
        done = list(pool.map(_episode, [str(tiny_task)] * 2, [str(tmp_path / "runs")] * 2, [1, 2]))
    assert len({d["run_dir"] for d in done}) == 2 and all(d["success"] for d in done)
    assert sorted(d["seed"] for d in done) == [1, 2]
    assert all(json.loads((Path(d["run_dir"]) / "result.json").read_text())["driven"] for d in done)


def test_a_scripted_episode_wins_house_price(tmp_path):
    from mlabc.shared import tasks_dir

    solution = (tasks_dir() / "house-price" / "solution" / "train_improved.py").read_text()
    env = make("house-price", runs_dir=tmp_path / "runs")
    env.reset(seed=0)
    env.step({"action": "Write File", "input": {"file_name": "train_improved.py", "content": solution}})
    observation, reward, terminated, truncated, info = env.step(
        {"action": "Execute Script", "input": {"script_name": "train_improved.py"}})
    assert not terminated, observation
    observation, reward, terminated, truncated, info = env.step(
        {"action": "Final Answer", "input": {"final_answer": "train_improved.py wrote submission.csv"}})
    assert terminated and info["result"]["success"] and reward == pytest.approx(info["result"]["improvement"])
    env.close()
