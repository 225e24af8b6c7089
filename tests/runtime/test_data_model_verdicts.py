"""The run-time verdict of each mistake the compiler's data model catches (tests/compiler/errors/E56*),
for a task built without `mlabc check`: never the agent's failure.

Preparation applies the same checks (mlab.data.faults): a variant whose answers or declarations would
fail its scoring is refused before any script runs, as the task's error. And should a prepared
variant get past that (prepared before, or its data changed), scoring asks the model again: a score
the task's data explains is result.json's `task error`, not a `submission format error`.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from mlab.build import compile_into_cache
from mlab.data import prepare as preparation
from mlab.data.prepare import prepare_data
from mlab.errors import DataError
from mlab.failure import FailureMode
from mlab.scoring.evaluate import evaluate

ERRORS = Path(__file__).resolve().parents[1] / "compiler" / "errors"
HEADER = re.compile(r"^\S+?:\d+:\d+: error\[(E\d{3})\]: (.*)$", re.MULTILINE)

# case → (its tasks, whether the compiler's own message is the runtime's): an id mismatch is caught
# first by the answers' id check, a failing generator by preparation itself, in their own words
CASES = {
    "E560-answer-ids-differ-from-test": (["t"], False),
    "E561-blank-targets": (["t"], True),
    "E562-metric-cannot-score-answers": (["t", "u"], True),
    "E563-class-table-read-by-position": (["t"], True),
    "E564-constraint-broken-by-answers": (["t", "u"], True),
    "E566-generator-fails": (["t"], False),
}


def _built(name: str, tmp_path: Path):
    """The corpus case built as `mlab run` builds it (no data model), from a copy of its files."""
    folder = tmp_path / "case"
    shutil.copytree(ERRORS / "files", folder / "files", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ERRORS / f"{name}.mlab", folder / f"{name}.mlab")
    return compile_into_cache([folder / f"{name}.mlab"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_without_the_check_preparation_refuses_the_task(name, tmp_path, mlab_env):
    tasks, same_words = CASES[name]
    build = _built(name, tmp_path)
    expected = [message for _, message in HEADER.findall((ERRORS / f"{name}.expected").read_text(encoding="utf-8"))]
    said = []
    for task in tasks:
        with pytest.raises(DataError) as refused:
            prepare_data(build.task(task), "lite")
        said.append(str(refused.value))
        assert str(refused.value).startswith(f"data variant lite of task {task}: ")
    if same_words:
        for message in expected:
            assert any(message in text for text in said), (message, said)


def _scored_in_spite_of_preparation(name: str, task: str, tmp_path: Path, monkeypatch, submission) -> dict:
    """result.json's core for the submission `submission(prepared)` writes, the variant prepared
    with preparation's check left out."""
    build = _built(name, tmp_path)
    with monkeypatch.context() as patch:
        patch.setattr(preparation, "check_declarations", lambda *args, **kwargs: None)
        prepared = prepare_data(build.task(task), "lite")
    workspace = tmp_path / "workspace"
    shutil.copytree(prepared.public, workspace)
    (workspace / "submission.csv").write_text(submission(prepared), encoding="utf-8")
    run = SimpleNamespace(task=build.task(task), meta={"data": {"variant": "lite"}},
                          workspace=SimpleNamespace(root=workspace), private_dir=prepared.private)
    return evaluate(run)


def test_answers_that_break_a_constraint_make_a_perfect_submission_a_task_error(tmp_path, mlab_env, monkeypatch):
    # the answers themselves, submitted: refused by the label constraint that the answers break
    result = _scored_in_spite_of_preparation("E564-constraint-broken-by-answers", "t", tmp_path, monkeypatch,
                                             lambda prepared: (prepared.private / "answers.csv").read_text())
    assert result["failure_mode"] == FailureMode.TASK_ERROR
    assert "the answers break the constraint of `label`: '2' is not in its vocabulary" in result["detail"]


def test_a_class_table_read_by_position_is_a_task_error_not_a_score(tmp_path, mlab_env, monkeypatch):
    rows = "id,cat,dog,bird\n" + "".join(f"{i},0.2,0.3,0.5\n" for i in range(1, 61))
    result = _scored_in_spite_of_preparation("E563-class-table-read-by-position", "t", tmp_path, monkeypatch,
                                             lambda prepared: rows)
    assert result["failure_mode"] == FailureMode.TASK_ERROR and result["score"] is None
    assert "no column of the probability table ['cat', 'dog', 'bird'] is named after" in result["detail"]


def test_a_sound_task_is_scored_as_before(tmp_path, mlab_env):
    """The same machinery on a task whose data keeps its declarations: the submission decides."""
    folder = tmp_path / "case"
    shutil.copytree(ERRORS / "files", folder / "files", ignore=shutil.ignore_patterns("__pycache__"))
    text = (ERRORS / "E564-constraint-broken-by-answers.mlab").read_text(encoding="utf-8")
    (folder / "sound.mlab").write_text(text.replace('["0", "1"]', '["0", "1", "2"]'), encoding="utf-8")
    task = compile_into_cache([folder / "sound.mlab"]).task("t")
    prepared = prepare_data(task, "lite")
    workspace = tmp_path / "workspace"
    shutil.copytree(prepared.public, workspace)
    (workspace / "submission.csv").write_text((prepared.private / "answers.csv").read_text(), encoding="utf-8")
    from mlab.scoring.score import score_workspace

    score = score_workspace(task, "lite", workspace, prepared.private)
    assert score.value == 1.0 and score.failure_mode is None
    (workspace / "submission.csv").write_text("id,label\n1,7\n", encoding="utf-8")
    assert score_workspace(task, "lite", workspace, prepared.private).failure_mode == FailureMode.SUBMISSION_FORMAT_ERROR


def test_an_evaluator_of_the_wrong_signature_is_a_task_error_at_run_time(tmp_path, mlab_env):
    """E568 without the check: the runtime calls the evaluator with two folders, and the TypeError
    that follows is the task's error, never a score or a format error charged to the agent."""
    from mlab.scoring.score import score_workspace
    from mlab.errors import MlabError

    build = _built("E568-evaluator-signature", tmp_path)
    task = build.task("t")
    prepared = prepare_data(task, "lite")
    workspace = tmp_path / "workspace"
    shutil.copytree(prepared.public, workspace)
    (workspace / "submission.csv").write_text("Id,y\n1,2.5\n", encoding="utf-8")
    with pytest.raises(MlabError, match=r"task t: its evaluator files/evaluators/three_arguments.py:score failed: "
                                        r"TypeError"):
        score_workspace(task, "lite", workspace, prepared.private)


def test_an_evaluator_that_never_rejects_makes_a_malformed_submission_a_task_error(tmp_path, mlab_env):
    """E569 without the check: the evaluator has no way to refuse what it cannot read, so a
    submission that is not text crashes it, and that crash is the task's error, not the agent's
    `submission format error`."""
    build = _built("E569-evaluator-never-rejects", tmp_path)
    task = build.task("t")
    prepared = prepare_data(task, "lite")
    workspace = tmp_path / "workspace"
    shutil.copytree(prepared.public, workspace)
    (workspace / "submission.csv").write_bytes(b"Id,y\n1,\xff\xfe\n")
    run = SimpleNamespace(task=task, meta={"data": {"variant": "lite"}},
                          workspace=SimpleNamespace(root=workspace), private_dir=prepared.private)
    result = evaluate(run)
    assert result["failure_mode"] == FailureMode.TASK_ERROR and result["score"] is None
    assert result["detail"].startswith("the task could not be scored: task t: its evaluator "
                                       "files/evaluators/never_rejects.py:score failed: UnicodeDecodeError")


def test_a_demonstration_that_runs_a_missing_script_is_a_task_error_not_a_format_error(tmp_path, mlab_env):
    """E570 without the check: mlab/demo plays the demonstration to its Final Answer, step 4's
    'trian.py' fails and no submission follows; the run is the task's error (its demonstration is
    broken), not the `submission format error` the missing submission would otherwise be."""
    from mlab.agent.outcome import LoopOutcome
    from mlab.cli.run import demonstration_verdict
    from mlab.scoring.evaluate import judged
    from mlab.scoring.score import score_workspace

    task = _built("E570-demonstration-runs-a-missing-script", tmp_path).task("t")
    prepared = prepare_data(task, "lite")
    workspace = tmp_path / "workspace"
    shutil.copytree(prepared.public, workspace)  # what the played steps left: no submission
    run = SimpleNamespace(task=task, meta={"data": {"variant": "lite"}})
    score = score_workspace(task, "lite", workspace, prepared.private)
    baseline = {"kind": "run", "value": 1.0, "measured": True}  # the starter's, as measured at scoring
    played = LoopOutcome("final_answer")
    assert judged(task.view, score, baseline, played.failure_mode, played.detail)["failure_mode"] == \
        FailureMode.SUBMISSION_FORMAT_ERROR
    outcome = demonstration_verdict(run, played)
    result = judged(task.view, score, baseline, outcome.failure_mode, outcome.detail)
    assert result["failure_mode"] == FailureMode.TASK_ERROR
    assert result["detail"] == ("the task's demonstration files/demo-scripts/demo.json executes 'trian.py' at "
                                "step 4, which no starter file, public file or earlier step provides (mlabc check: E570)")
    sound = _built("E570-demonstration-runs-a-missing-script", tmp_path / "sound")
    demo = Path(sound.task("t").root) / "files" / "demo-scripts" / "demo.json"
    demo.write_text(demo.read_text(encoding="utf-8").replace("trian.py", "train.py"), encoding="utf-8")
    assert demonstration_verdict(SimpleNamespace(task=sound.task("t"), meta=run.meta), played) is played


@pytest.mark.parametrize("declared", [True, False], ids=["declared", "not declared"])
def test_unlabelled_training_rows_are_prepared_only_where_declared(declared, tmp_path, mlab_env):
    """`answers ["y"] unlabelled` (a semi-supervised task): preparation keeps training rows without a
    label; undeclared, the same rows are the task's error (E561) before any script runs."""
    folder = tmp_path / "case"
    folder.mkdir()
    shutil.copytree(ERRORS / "files" / "env", folder / "env")
    rows = [f"{i},{i * 0.5},{'' if i % 4 == 0 and i <= 30 else i + 1}" for i in range(1, 41)]
    (folder / "rows.csv").write_text("id,x,y\n" + "\n".join(rows) + "\n", encoding="utf-8")
    (folder / "t.mlab").write_text(f'''task t {{
  title "Semi-supervised" category canonical problem "Predict y." starter "env"
  data lite {{
    from csv "rows.csv" split ordered 0.25 id "id"
    answers ["y"]{" unlabelled" if declared else ""}
    public ["train.csv", "test.csv"] private ["answers.csv"]
  }}
  metric mae on "y" baseline run "train.py"
}}
''', encoding="utf-8")
    task = compile_into_cache([folder / "t.mlab"]).task("t")
    if declared:
        prepared = prepare_data(task, "lite", tmp_path / "data")  # a cache of its own: the same rows either way
        assert (prepared.public / "train.csv").read_text().count(",\n") == 7  # 7 training rows without y
        return
    with pytest.raises(DataError, match=r"7 of the 30 training rows of data `lite` have no `y` \(E561: .*declare "
                                        r"them: `answers \[\"y\"\] unlabelled`\)"):
        prepare_data(task, "lite", tmp_path / "data")


SOUND = {"answers": 'answers ["y"] unlabelled', "constraint": 'column "y" number from 0 to 100',
         "metric": 'metric mae on "y"'}
# a declaration the checks read, made wrong, that the preparation key leaves out: the data is the same
WRONG = {"answers": ('answers ["y"]', r"7 of the 30 training rows of data `lite` have no `y` \(E561"),
         "constraint": ('column "y" number from 0 to 10', r"the answers break the constraint of `y`: it goes up "
                                                          r"to 40.5, above 10 \(E564"),
         "metric": ('metric qwk on "y"', r"metric `qwk` cannot score `y`: .* not whole, and qwk rates whole numbers \(E562")}


def _semi_supervised(folder: Path, **declarations) -> Path:
    """A task of 40 rows, 7 training rows without `y`, and `declarations` (SOUND's, by default)."""
    said = {**SOUND, **declarations}
    if not (folder / "rows.csv").exists():
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copytree(ERRORS / "files" / "env", folder / "env")
        rows = [f"{i},{i * 0.5},{'' if i % 4 == 0 and i <= 30 else i + 0.5}" for i in range(1, 41)]
        (folder / "rows.csv").write_text("id,x,y\n" + "\n".join(rows) + "\n", encoding="utf-8")
    (folder / "t.mlab").write_text(f'''task t {{
  title "Semi-supervised" category canonical starter "env"
  problem "Predict y, then write submission.csv with the columns id and y."
  data lite {{
    from csv "rows.csv" split ordered 0.25 id "id"
    {said["answers"]}
    public ["train.csv", "test.csv"] private ["answers.csv"]
  }}
  submission "submission.csv" columns ["id", "y"] {{ {said["constraint"]} }}
  {said["metric"]} baseline run "train.py"
}}
''', encoding="utf-8")
    return folder / "t.mlab"


@pytest.mark.parametrize("changed", sorted(WRONG))
def test_a_declaration_changed_after_preparation_is_checked_on_the_reused_data(changed, tmp_path, mlab_env,
                                                                             monkeypatch):
    """The prepared data is named by what makes it (preparation_key); a declaration that only the
    checks read (a metric, a constraint, `unlabelled`) is not in that name, so data prepared under a
    sound declaration is reused under a wrong one, and the checks are asked again on it."""
    from mlab.data import faults

    cache = tmp_path / "data"
    sound = compile_into_cache([_semi_supervised(tmp_path / "case")]).task("t")
    first = prepare_data(sound, "lite", cache)
    wrong_text, message = WRONG[changed]
    wrong = compile_into_cache([_semi_supervised(tmp_path / "case", **{changed: wrong_text})]).task("t")
    with monkeypatch.context() as patch:
        patch.setattr(preparation, "_materialise", lambda *args: pytest.fail("the data was made again"))
        with pytest.raises(DataError, match=r"^data variant lite of task t: the prepared data breaks the task's "
                                            r"declarations: .*" + message):
            prepare_data(wrong, "lite", cache)
        # the sound declarations' verdict was kept: reused again under them, the data is not read again
        patch.setattr(faults, "check_prepared", lambda *args: pytest.fail("checked again"))
        again = prepare_data(sound, "lite", cache)
    assert again.reused and again.folder == first.folder
