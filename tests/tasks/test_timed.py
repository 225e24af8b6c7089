"""Timed metrics: the submitted script and the starter run side by side in the sandbox.

A correct faster script scores better than the starter; a script whose output differs scores
nothing, with the reason. Each script runs once here (TIMED_RUNS is 3 in real evaluations);
no test asserts how long anything took, only which of two programs was faster by far.
"""
from __future__ import annotations

import shutil
import textwrap

import pytest

from mlab import timed
from mlab.evaluate import score_workspace

VECTORIZED = textwrap.dedent('''
    import numpy as np

    inputs = np.load("inputs.npz")
    images, kernels, biases = inputs["images"], inputs["kernels"], inputs["biases"]
    stride, padding = int(inputs["stride"]), int(inputs["padding"])
    padded = np.pad(images.astype(float), ((0, 0), (padding, padding), (padding, padding), (0, 0)))
    size = kernels.shape[0]
    windows = np.lib.stride_tricks.sliding_window_view(padded, (size, size), axis=(1, 2))
    windows = windows[:, ::stride, ::stride]
    result = np.einsum("bhwcij,ijcf->bhwf", windows, kernels) + biases
    np.save("output.npy", np.maximum(result, 0.0) + OFFSET)
''')

BATCHED = '''
def generate_batch(model, prompts, new_tokens):
    """Greedy continuation of all prompts at once."""
    tokens = prompts.clone()
    for _ in range(new_tokens):
        logits = model(tokens)
        tokens = torch.cat([tokens, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return tokens[:, prompts.shape[1]:]


if __name__ == "__main__":'''
STARTER_LOOP = 'outputs = [generate(model, prompt, cfg["new_tokens"]) for prompt in prompts]'

ZEROS = textwrap.dedent('''
    import numpy as np

    prompts = np.load("prompts.npy")
    new_tokens = int(np.load("weights.npz")["new_tokens"])
    np.save("output.npy", np.zeros((len(prompts), new_tokens), dtype=np.int64))
''')


@pytest.fixture
def one_run_each(monkeypatch):
    monkeypatch.setattr(timed, "TIMED_RUNS", 1)


def workspace_with(tmp_path, prepared, name: str, files: dict[str, str]):
    from task_helpers import REPO

    workspace = tmp_path / "workspace"
    shutil.copytree(REPO / "tasks" / name / "env", workspace)
    shutil.copytree(prepared(name).public, workspace, dirs_exist_ok=True)
    for file, text in files.items():
        (workspace / file).write_text(text, encoding="utf-8")
    return workspace


def test_a_correct_vectorized_script_beats_the_starter_in_a_run(task_of, tmp_path, one_run_each):
    from mlab.evaluate import evaluate
    from mlab.run import Run

    task = task_of("vectorization")
    run = Run.create(task, task.build.agent("research"), tmp_path / "runs")
    try:
        (run.workspace.root / "train.py").write_text(VECTORIZED.replace("OFFSET", "0.0"))
        result = evaluate(run)
    finally:
        run.close()
    assert result["failure_mode"] is None, result["detail"]
    baseline = result["baseline"]
    assert baseline["measured"] is True and baseline["kind"] == "run" and baseline["runs"] == 1
    assert result["score"] < baseline["value"]
    assert result["improvement"] > 0.10 and result["success"] is True


def test_a_vectorized_script_with_a_wrong_output_scores_nothing(task_of, prepared, tmp_path, one_run_each):
    workspace = workspace_with(tmp_path, prepared, "vectorization", {"train.py": VECTORIZED.replace("OFFSET", "0.5")})
    score = score_workspace(task_of("vectorization"), "lite", workspace, prepared("vectorization").private)
    assert (score.value, score.failure_mode) == (None, "submission format error")
    assert "wrote a wrong output.npy" in score.detail and "differs from the reference" in score.detail
    assert score.baseline["value"] is not None  # the starter was still timed


def test_a_script_that_crashes_scores_nothing_with_its_output(task_of, prepared, tmp_path, one_run_each):
    workspace = workspace_with(tmp_path, prepared, "vectorization", {"train.py": "raise SystemExit('no luck')\n"})
    score = score_workspace(task_of("vectorization"), "lite", workspace, prepared("vectorization").private)
    assert score.failure_mode == "submission format error"
    assert "train.py ended with exit code 1" in score.detail and "no luck" in score.detail


def test_a_missing_script_is_no_submission(task_of, prepared, tmp_path):
    (tmp_path / "empty").mkdir()
    score = score_workspace(task_of("llama-inference"), "lite", tmp_path / "empty", prepared("llama-inference").private)
    assert (score.submitted, score.failure_mode) == (False, "submission format error")
    assert "inference.py" in score.detail


def test_batched_generation_beats_the_one_prompt_at_a_time_starter(task_of, prepared, tmp_path, one_run_each):
    from task_helpers import REPO

    starter = (REPO / "tasks" / "llama-inference" / "env" / "inference.py").read_text()
    assert STARTER_LOOP in starter and starter.count('if __name__ == "__main__":') == 1
    faster = starter.replace('\nif __name__ == "__main__":', BATCHED).replace(
        STARTER_LOOP, 'outputs = list(generate_batch(model, prompts, cfg["new_tokens"]))')
    workspace = workspace_with(tmp_path, prepared, "llama-inference", {"inference.py": faster})
    score = score_workspace(task_of("llama-inference"), "lite", workspace, prepared("llama-inference").private)
    assert score.failure_mode is None, score.detail
    assert score.value < score.baseline["value"]


def test_generation_with_wrong_tokens_scores_nothing(task_of, prepared, tmp_path, one_run_each):
    workspace = workspace_with(tmp_path, prepared, "llama-inference", {"inference.py": ZEROS})
    score = score_workspace(task_of("llama-inference"), "lite", workspace, prepared("llama-inference").private)
    assert (score.value, score.failure_mode) == (None, "submission format error")
    assert "output.npy" in score.detail and "differs" in score.detail


def test_a_link_to_the_answers_is_not_followed_into_the_timed_copy(tmp_path):
    from mlab.timed_sandbox import fresh_copy

    secret = tmp_path / "private" / "expected_output.npy"
    secret.parent.mkdir()
    secret.write_bytes(b"answers")
    workspace = tmp_path / "workspace"
    (workspace / "sub").mkdir(parents=True)
    (workspace / "train.py").write_text("pass\n")
    (workspace / "answers.npy").symlink_to(secret)
    (workspace / "linked").symlink_to(secret.parent)
    copy = fresh_copy(workspace, tmp_path / "copy", leave_out=("output.npy",))
    assert sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*")) == ["sub", "train.py"]
