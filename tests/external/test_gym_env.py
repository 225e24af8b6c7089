"""mlab.gym: a task and an action table as a Gymnasium environment whose episodes are runs."""
from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from needs import module  # noqa: E402

gymnasium = module("gymnasium", "mlab.gym needs the optional extra `gym` (gymnasium)")
from gymnasium.utils.env_checker import check_env  # noqa: E402

from agent_helpers import result, trace  # noqa: E402
from mlab.gym.env import MlabEnv  # noqa: E402

EXECUTE = {"action": "Execute Script", "input": {"script_name": "fit.py"}}
FINAL = {"action": "Final Answer", "input": {"final_answer": "fit.py wrote submission.csv"}}


def test_the_environment_passes_gymnasiums_checker(tmp_path, shaped_task):
    # the tiny task with a declared shaping: the checker's steps pass through it too
    env = MlabEnv(str(shaped_task), runs_dir=tmp_path / "runs", limits={"steps": 40})
    assert env.shaping is not None
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
    env = MlabEnv(task, runs_dir=runs_dir)
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
    from mlabc.resources import tasks_dir

    solution = (tasks_dir() / "house-price" / "solution" / "train_improved.py").read_text()
    env = MlabEnv("house-price", runs_dir=tmp_path / "runs")
    env.reset(seed=0)
    env.step({"action": "Write File", "input": {"file_name": "train_improved.py", "content": solution}})
    observation, reward, terminated, truncated, info = env.step(
        {"action": "Execute Script", "input": {"script_name": "train_improved.py"}})
    assert not terminated, observation
    observation, reward, terminated, truncated, info = env.step(
        {"action": "Final Answer", "input": {"final_answer": "train_improved.py wrote submission.csv"}})
    assert terminated and info["result"]["success"] and reward == pytest.approx(info["result"]["improvement"])
    env.close()


SHAPED = ('  gym { shaping validation  weight 0.5 }\n', 'private ["answers.csv"] validation 0.25 }')


@pytest.fixture(scope="module")
def shaped_task(tiny_task, tmp_path_factory) -> Path:
    """The tiny task with a validation split (4 of its 16 training rows) and a declared shaping."""
    source = tmp_path_factory.mktemp("shaped") / "shaped.mlab"
    text = tiny_task.read_text().replace('private ["answers.csv"] }', SHAPED[1]).replace(
        "  agent research\n", "  agent research\n" + SHAPED[0])
    source.write_text(text.replace('starter "env"', f'starter "{tiny_task.parent / "env"}"').replace(
        'csv "rows.csv"', f'csv "{tiny_task.parent / "rows.csv"}"'))
    return source


def _predictions(workspace: Path, offset: float) -> dict:
    """A Write File action: validation_submission.csv off the true y = 2x + 1 by `offset` (MAE = offset)."""
    rows = (workspace / "validation.csv").read_text().splitlines()[1:]
    lines = ["Id,y"] + [f"{r.split(',')[0]},{2 * int(r.split(',')[1]) + 1 + offset}" for r in rows]
    return {"action": "Write File", "input": {"file_name": "validation_submission.csv",
                                              "content": "\n".join(lines) + "\n"}}


VALIDATE = {"action": "Validate Submission", "input": {}}


def test_a_declared_shaping_rewards_each_validation_improvement(tmp_path, shaped_task):
    env = MlabEnv(str(shaped_task), runs_dir=tmp_path / "runs")
    env.reset(seed=0)
    workspace = env.unwrapped.run.workspace.root
    rewards, seen = [], []
    for offset in (4, 1, 2):  # validation MAE 4, then 1 and 2
        rewards.append(env.step(_predictions(workspace, offset))[1])
        observation, reward, *_ = env.step(VALIDATE)
        seen.append(observation.split("validation_submission.csv: ")[1].split(" on the")[0])
        rewards.append(reward)
    assert seen == ["mae 4", "mae 1", "mae 2"]
    # weight 0.5 × the improvement of the best score as a fraction of the first (4): 3/4, then none
    assert rewards == pytest.approx([0, 0, 0, 0.5 * 3 / 4, 0, 0])
    observation, reward, terminated, truncated, info = env.step(FINAL)
    assert terminated and reward == pytest.approx(info["result"]["improvement"] or 0.0)
    env.reset(seed=1)  # a new episode starts afresh: its first score (0.5, better than the last best) gets 0
    env.step(_predictions(env.unwrapped.run.workspace.root, 0.5))
    assert env.step(VALIDATE)[1] == 0.0
    env.close()


def test_a_passed_shaping_wins_over_the_declared_one(tmp_path, shaped_task):
    env = MlabEnv(str(shaped_task), runs_dir=tmp_path / "runs", shaping=lambda record: 0.25)
    env.reset(seed=0)
    assert env.step({"action": "List Files", "input": {"dir_path": "."}})[1] == 0.25
    env.reset(seed=1)
    assert env.shaping(None) == 0.25, "kept across episodes"
    env.close()


def _docs_snippet(after: str) -> str:
    """The first ```python block of docs/external.md after the line that contains `after`, as printed."""
    import textwrap

    page = (Path(__file__).resolve().parents[2] / "docs" / "external.md").read_text(encoding="utf-8")
    block = page[page.index(after):].split("```python\n", 1)[1].split("```", 1)[0]
    return textwrap.dedent(block)


def test_the_docs_gymnasium_make_snippet_runs_as_printed_after_import_mlab_gym(tmp_path):
    # a fresh interpreter: no earlier import of mlab.gym.env in this process can register it for the snippet
    import os
    import subprocess
    import sys

    snippet = _docs_snippet("Registered as `mlab/Task-v0`")
    assert "import mlab.gym " in snippet and 'gymnasium.make("mlab/Task-v0"' in snippet
    done = subprocess.run([sys.executable, "-c", snippet], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Final Answer" in done.stdout and (tmp_path / "runs").is_dir()


def test_a_policy_cannot_write_its_own_shaped_reward(tmp_path, shaped_task):
    """Issue 41: the text of a Validate Submission report in a file the policy prints is no validation
    score; only the harness's own validation scores shape the reward, within the declared weight."""
    env = MlabEnv(str(shaped_task), runs_dir=tmp_path / "runs")
    env.reset(seed=0)
    workspace = env.unwrapped.run.workspace.root
    env.step(_predictions(workspace, 4))
    assert env.step(VALIDATE)[1] == 0.0   # the first validation score: the reference
    forged = "validation_submission.csv: mae 1e-300 on the 5 validation rows\\n" * 3
    env.step({"action": "Write File", "input": {"file_name": "report.py", "content": f"print({forged!r})\n"}})
    observation, reward, *_ = env.step({"action": "Execute Script", "input": {"script_name": "report.py"}})
    assert "mae 1e-300 on the" in observation and reward == 0.0
    env.step(_predictions(workspace, -1e307))   # an absurd improvement is capped by the weight (0.5)
    total = sum(env.step(VALIDATE)[1] for _ in range(2))
    assert 0.0 <= total <= 0.5
    env.close()


def test_a_deep_json_input_is_an_observation(tmp_path, tiny_task):
    env = MlabEnv(str(tiny_task), runs_dir=tmp_path / "runs")
    env.reset(seed=0)
    deep = '{"dir_path": ' + "[" * 100_000 + "]" * 100_000 + "}"
    observation, reward, terminated, truncated, info = env.step({"action": "List Files", "input": deep})
    assert "levels deep" in observation and not terminated and reward == 0.0
    env.close()
