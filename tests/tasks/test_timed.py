"""Timed metrics: the submitted script and the starter run side by side in the sandbox.

A correct faster script scores better than the starter; a script whose output differs scores
nothing, with the reason. Each script runs once here (TIMED_RUNS rounds in real evaluations), or its times are scripted;
no test asserts how long anything took, only which of two programs was faster by far.
"""
from __future__ import annotations

import dataclasses
import shutil
import textwrap

import pytest

from mlab.scoring import timed
from mlab.scoring.score import score_workspace

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
    from mlab.scoring.evaluate import evaluate
    from mlab.run.folder import Run

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
    from mlab.scoring.timed_sandbox import fresh_copy

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


class ScriptedTimes:
    """A stand-in for the scoring sandbox: writes the expected output and reports set wall times.

    It records which program ran in which order (the submission's train.py carries a marker),
    so the alternation of rounds and the success rule are tested without timing anything.
    """

    def __init__(self, expected, starter_s: list[float], submission_s: list[float]):
        self.expected, self.order = expected, []
        self.times = {"starter": list(starter_s), "submission": list(submission_s)}

    def run(self, folder, argv):
        from mlab.sandbox.runner import ScriptResult

        which = "submission" if "# submission" in (folder / argv[0]).read_text() else "starter"
        self.order.append(which)
        shutil.copyfile(self.expected, folder / "output.npy")
        return ScriptResult(exit_code=0, timed_out=False, out_of_memory=False,
                            killed_reason=None, output="", output_chars=0,
                            wall_s=self.times[which].pop(0), cpu_s=0.0, peak_memory_bytes=0, sandboxed=True)


@pytest.fixture
def scripted_rounds(monkeypatch, task_of, tmp_path):
    """evaluate() of a vectorization run whose timings are scripted: (result, order of programs)."""
    from mlab.scoring.evaluate import evaluate
    from mlab.run.folder import Run

    def evaluate_with(starter_s, submission_s, rounds=None):
        task = task_of("vectorization")
        run = Run.create(task, task.build.agent("research"), tmp_path / f"runs-{len(list(tmp_path.iterdir()))}")
        try:
            fake = ScriptedTimes(run.private_dir / "expected_output.npy", starter_s, submission_s)
            monkeypatch.setattr(timed, "scoring_sandbox", lambda *args, **kwargs: fake)
            monkeypatch.setattr(timed, "TIMED_RUNS", rounds or len(starter_s))
            train = run.workspace.root / "train.py"
            train.write_text(train.read_text() + "\n# submission\n")
            return evaluate(run), fake.order
        finally:
            run.close()

    return evaluate_with


def test_rounds_alternate_which_program_runs_first(scripted_rounds):
    _, order = scripted_rounds([1.0] * 4, [0.5] * 4)
    assert order == ["starter", "submission", "submission", "starter",
                     "starter", "submission", "submission", "starter"]


def test_a_speedup_in_every_round_succeeds_with_each_round_reported(scripted_rounds):
    result, order = scripted_rounds([1.0, 1.1, 0.9, 1.0, 1.0], [0.5, 0.5, 0.6, 0.5, 0.4])
    assert result["success"] is True and result["failure_mode"] is None
    assert result["improvement"] == pytest.approx(0.5)
    baseline = result["baseline"]
    assert baseline["runs"] == 5 and baseline["paired_speedups"] == [2.0, 2.2, 1.5, 2.0, 2.5]
    assert baseline["speedup_floor"] == 1.5
    assert len(order) == 10  # every round cleared the threshold: no more rounds were timed


def test_each_timed_round_is_reported_as_it_ends(scripted_rounds, capsys):
    scripted_rounds([1.0, 1.0], [0.5, 0.25])
    assert capsys.readouterr().err.splitlines()[-2:] == [
        "timed scoring: round 1 of 2: starter 1.00s, train.py 0.50s",
        "timed scoring: round 2 of 2: starter 1.00s, train.py 0.25s"]


def test_one_slow_round_earns_more_rounds_and_a_real_speedup_then_succeeds(scripted_rounds):
    # A real 1.5x speed-up; the third round was disturbed. Ten more rounds show it in 14 of 15.
    starter = [1.0] * 15
    submission = [0.66, 0.66, 1.05] + [0.66] * 12
    result, order = scripted_rounds(starter, submission, rounds=5)
    assert len(order) == 30 and result["baseline"]["runs"] == 15
    assert result["success"] is True and result["failure_mode"] is None


def test_a_median_speedup_that_too_few_rounds_show_is_not_a_success(scripted_rounds):
    # The medians say 15% faster, but only 9 of 15 rounds clear 10%: that is noise.
    starter = [1.0] * 15
    submission = [0.85, 0.85, 0.85, 0.85, 1.02] + [0.85, 1.02] * 3 + [0.85] * 2 + [1.02] * 2
    result, order = scripted_rounds(starter, submission, rounds=5)
    assert len(order) == 30
    assert result["improvement"] == pytest.approx(0.15)
    assert result["success"] is False and result["failure_mode"] == "small improvement"
    assert result["detail"].startswith("improvement 15.0% (medians of 15 rounds) reaches the threshold 10%, "
                                       "but only 9 of the 15 rounds did (12 needed)")


def test_a_speedup_below_the_threshold_says_so_plainly(scripted_rounds):
    result, order = scripted_rounds([1.0] * 3, [0.95] * 3)
    assert len(order) == 6  # the medians fall short: no more rounds
    assert result["success"] is False and result["failure_mode"] == "small improvement"
    assert result["detail"] == "improvement 5.0% is below the threshold 10%"


def _run_with_one_submission(task_of, tmp_path):
    """A vectorization run of one step: the starter's train.py written back as the submission."""
    from mlab.run.folder import Run

    task = task_of("vectorization")
    run = Run.create(task, task.build.agent("research"), tmp_path / "runs")
    try:
        train = (run.workspace.root / "train.py").read_text()
        run.step("Write File", {"file_name": "train.py", "content": train + "\n# submission\n"})
    finally:
        run.close()
    return run


def test_each_step_of_a_timed_run_is_judged_beside_its_own_starter_timing_by_the_same_rule(
        task_of, tmp_path, monkeypatch):
    from mlab.reports.eval import score_steps
    from mlab.reports.runs import load_run

    run = _run_with_one_submission(task_of, tmp_path)
    # Step 0 is the starter against itself (ten starter runs); step 1 times the starter at 2 s and
    # a submission twice as fast in 9 of 15 rounds only: its medians say 50%, its rounds say noise.
    starter = [1.0] * 10 + [2.0] * 15
    submission = [1.0] * 4 + [2.1] + [1.0, 2.1] * 5
    fake = ScriptedTimes(run.private_dir / "expected_output.npy", starter, submission)
    monkeypatch.setattr(timed, "scoring_sandbox", lambda *args, **kwargs: fake)
    rows = score_steps(load_run(run.dir))
    assert [row["step"] for row in rows] == [0, 1]
    assert rows[0]["improvement"] == pytest.approx(0.0) and rows[0]["success"] is False
    assert rows[1]["score"] == pytest.approx(1.0)
    assert rows[1]["improvement"] == pytest.approx(0.5)  # against the starter timed beside it
    assert rows[1]["success"] is False


def test_a_timed_script_that_fills_the_disk_is_stopped_at_the_tasks_disk_limit(task_of, prepared, tmp_path,
                                                                                one_run_each, monkeypatch):
    from mlab.scoring import timed_sandbox
    from mlab.limits import resolve_limits

    def small_disk(*layers):
        return dataclasses.replace(resolve_limits(*layers), disk=30 * 2**20)

    monkeypatch.setattr(timed_sandbox, "resolve_limits", small_disk)
    filler = 'chunk = b"x" * 2**20\nfor i in range(400):\n    open(f"fill-{i}.bin", "wb").write(chunk)\n'
    workspace = workspace_with(tmp_path, prepared, "vectorization", {"train.py": filler})
    score = score_workspace(task_of("vectorization"), "lite", workspace, prepared("vectorization").private)
    assert score.failure_mode == "submission format error"
    assert "was stopped" in score.detail and "disk limit" in score.detail, score.detail


def test_a_budget_on_a_step_of_a_timed_run_is_judged_beside_its_own_starter_timing_once(
        task_of, tmp_path, monkeypatch):
    from mlab.reports.budgets import budget_points, parse_budgets
    from mlab.reports.runs import load_run

    run = _run_with_one_submission(task_of, tmp_path)
    # the step's script twice as fast as the starter in every round: a success
    fake = ScriptedTimes(run.private_dir / "expected_output.npy", [2.0] * 10, [1.0] * 10)
    monkeypatch.setattr(timed, "scoring_sandbox", lambda *args, **kwargs: fake)
    budgets = parse_budgets(["time=1h"])
    (point,) = budget_points(load_run(run.dir), budgets).values()
    assert point["step"] == 1 and point["score"] == pytest.approx(1.0)
    assert point["improvement"] == pytest.approx(0.5) and point["success"] is True  # beside its own starter
    timed_once = len(fake.order)
    assert timed_once == 2 * timed.TIMED_RUNS  # each round: the starter and the step's script
    (again,) = budget_points(load_run(run.dir), parse_budgets(["time=2h"])).values()  # same snapshot: cached
    assert again["score"] == pytest.approx(1.0) and again["success"] is True and len(fake.order) == timed_once
