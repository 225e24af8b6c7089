"""The evaluator escape hatch, on babylm: the task's evaluator scores a submitted TorchScript model
in the sandbox; an unusable model is the submission's fault, a failing evaluator the task's."""
# no `from __future__ import annotations`: TorchScript reads the annotations of Uniform

import math

import pytest

from mlab.errors import MlabError
from mlab.scoring.score import score_workspace
from needs import missing, module

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit:DeprecationWarning")  # babylm's format is TorchScript
torch = module("torch", "babylm's models are TorchScript: pip install torch==2.13.0")


class Uniform(torch.nn.Module):
    """Equal logits for every word: perplexity is then exactly the vocabulary size."""

    context_length: int

    def __init__(self, vocab_size: int, context_length: int = 16):
        super().__init__()
        self.vocab_size = vocab_size
        self.context_length = context_length

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return torch.zeros(tokens.shape[0], tokens.shape[1], self.vocab_size)


def save_model(workspace, module) -> None:
    (workspace / "output").mkdir(parents=True, exist_ok=True)
    torch.jit.save(torch.jit.script(module), str(workspace / "output" / "model.pt"))


def vocab_size(prepared) -> int:
    return len([t for t in (prepared("babylm").private / "vocab.txt").read_text().split("\n") if t])


def test_a_uniform_model_has_the_vocabulary_size_as_perplexity(task_of, prepared, tmp_path):
    size = vocab_size(prepared)
    save_model(tmp_path, Uniform(size))
    score = score_workspace(task_of("babylm"), "lite", tmp_path, prepared("babylm").private)
    assert score.failure_mode is None, score.detail
    assert score.value == pytest.approx(size, rel=1e-9)


def test_the_starter_model_beats_the_uniform_one(task_of):
    from mlab.scoring.baseline import recorded_entry

    recorded = recorded_entry(task_of("babylm"), "lite")["value"]
    assert math.isfinite(recorded) and 1.0 < recorded < 20.0  # far below the vocabulary size


def test_no_model_file_is_no_submission(task_of, prepared, tmp_path):
    score = score_workspace(task_of("babylm"), "lite", tmp_path, prepared("babylm").private)
    assert (score.value, score.submitted, score.failure_mode) == (None, False, "submission format error")
    assert "output/model.pt" in score.detail


def test_a_file_that_is_not_torchscript_is_a_format_error(task_of, prepared, tmp_path):
    (tmp_path / "output").mkdir()
    (tmp_path / "output" / "model.pt").write_bytes(b"not a model at all")
    score = score_workspace(task_of("babylm"), "lite", tmp_path, prepared("babylm").private)
    assert (score.value, score.failure_mode) == (None, "submission format error")
    assert "cannot be loaded with torch.jit.load" in score.detail


def test_a_model_of_the_wrong_shape_is_a_format_error(task_of, prepared, tmp_path):
    save_model(tmp_path, Uniform(vocab_size(prepared) - 1))
    score = score_workspace(task_of("babylm"), "lite", tmp_path, prepared("babylm").private)
    assert score.failure_mode == "submission format error"
    assert "expected a tensor of shape" in score.detail


def test_an_evaluator_that_fails_is_the_tasks_fault(task_copy, tmp_path):
    from mlab.data.prepare import prepare_data

    def break_evaluator(root):
        path = root / "babylm" / "evaluate.py"
        path.write_text(path.read_text() + "\n\ndef score(workspace, private_dir):\n"
                        "    raise RuntimeError('the evaluator has a bug')\n")

    task = task_copy("babylm", break_evaluator)
    done = prepare_data(task, "lite")
    (tmp_path / "ws" / "output").mkdir(parents=True)
    (tmp_path / "ws" / "output" / "model.pt").write_bytes(b"x")
    with pytest.raises(MlabError, match=r"task babylm: its evaluator babylm/evaluate.py:score failed: "
                                        r"RuntimeError: the evaluator has a bug"):
        score_workspace(task, "lite", tmp_path / "ws", done.private)


def test_the_evaluator_sees_the_private_files_read_only(task_copy, tmp_path):
    from mlab.data.prepare import prepare_data
    from mlab.sandbox.runner import sandbox_available

    if not sandbox_available()[0]:
        missing("bubblewrap is not available: read-only binds need it")

    def writing_evaluator(root):
        path = root / "babylm" / "evaluate.py"
        path.write_text(path.read_text() + "\n\ndef score(workspace, private_dir):\n"
                        "    try:\n"
                        "        (Path(private_dir) / 'test.txt').write_text('changed')\n"
                        "    except OSError:\n"
                        "        return 1.0\n"
                        "    return 2.0\n")

    task = task_copy("babylm", writing_evaluator)
    done = prepare_data(task, "lite")
    (tmp_path / "ws" / "output").mkdir(parents=True)
    (tmp_path / "ws" / "output" / "model.pt").write_bytes(b"x")
    assert score_workspace(task, "lite", tmp_path / "ws", done.private).value == 1.0
    assert (done.private / "test.txt").read_text() != "changed"
