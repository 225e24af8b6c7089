"""Column constraints (docs/language.md#column-constraints) in the shared submission check: each
kind of rule refuses what breaks it, naming the row, its id, the column, the value and the rule;
what keeps the rules passes unchanged."""
from __future__ import annotations

from pathlib import Path

import pytest

from mlab.data.vocabulary import VOCABULARY_DIR
from mlab.documents.task import Constraint, Variant
from mlab.scoring.constraints import VocabularyError, load_rules
from mlab.scoring.submission import SubmissionError, check_submission

IDS = ["a", "b", "c", "d"]


def rules_of(constraints: list[dict], private: Path | None):
    """The rules of constraints as task.yaml declares them."""
    return load_rules([Constraint.of(c) for c in constraints], private)


def submit(tmp_path: Path, header: str, rows: list[str]) -> Path:
    path = tmp_path / "submission.csv"
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def refused(path: Path, constraints: list[dict], columns: list[str], metric: str, private: Path | None = None) -> str:
    rules = rules_of(constraints, private)
    with pytest.raises(SubmissionError) as caught:
        check_submission(path, IDS, "id", columns, metric, ["id", *columns], rules=rules)
    return str(caught.value)


@pytest.fixture
def private(tmp_path) -> Path:
    """A private folder holding the task's copy of its vocabulary file, as preparation leaves it."""
    folder = tmp_path / "private"
    (folder / VOCABULARY_DIR).mkdir(parents=True)
    (folder / VOCABULARY_DIR / "key.csv").write_text("id,name\np1,crab\np2,eel\np3,star\np99,squid\n")
    return folder


RANKING = {"column": "items", "kind": "ranking", "at_most": 3, "vocabulary_file": "key.csv",
           "vocabulary_column": "id"}


def test_a_ranking_with_a_repeated_and_an_unknown_item_is_refused_row_by_row(tmp_path, private):
    path = submit(tmp_path, "id,items", ["a,p1 p2", "b,p3", "c,p99 p99 banana", "d,p1 p2 p3 p99"])
    text = refused(path, [RANKING], ["items"], "map_at_k", private)
    assert text == ("submission.csv: 2 row(s) break the rule of `items` (a ranking of at most 3 distinct items of "
                    "key.csv column id, separated by spaces): row 3 (id c), column items: 'p99' appears twice; "
                    "'banana' is not in the vocabulary; row 4 (id d), column items: 4 items, more than 3")


def test_a_ranking_of_exactly_k_items_from_an_inline_vocabulary(tmp_path):
    rule = {"column": "items", "kind": "ranking", "exactly": 2, "vocabulary": ["x", "y", "z"]}
    good = submit(tmp_path, "id,items", ["a,x y", "b,z x", "c,y z", "d,x z"])
    assert list(check_submission(good, IDS, "id", ["items"], "map_at_k", rules=rules_of([rule], None))["items"]) \
        == ["x y", "z x", "y z", "x z"]
    bad = submit(tmp_path, "id,items", ["a,x y", "b,z", "c,y z", "d,x w"])
    text = refused(bad, [rule], ["items"], "map_at_k")
    assert "row 2 (id b), column items: 1 item(s), not exactly 2" in text
    assert "row 4 (id d), column items: 'w' is not in the vocabulary" in text


def test_an_integer_outside_its_range_or_not_whole_is_refused(tmp_path):
    rule = {"column": "age", "kind": "integer", "min": 0, "max": 120}
    path = submit(tmp_path, "id,age", ["a,30", "b,121", "c,4.5", "d,-1"])
    text = refused(path, [rule], ["age"], "mae")
    assert text.startswith("submission.csv: 3 row(s) break the rule of `age` (an integer from 0 to 120): ")
    assert "row 2 (id b), column age: '121' is above 120" in text
    assert "row 3 (id c), column age: '4.5' is not an integer" in text
    assert "row 4 (id d), column age: '-1' is below 0" in text


def test_a_probability_outside_0_to_1_is_refused(tmp_path):
    path = submit(tmp_path, "id,p", ["a,0", "b,1", "c,1.2", "d,0.5"])
    text = refused(path, [{"column": "p", "kind": "probability"}], ["p"], "mae")
    assert text.startswith("submission.csv: 1 row(s) break the rule of `p` (a probability (a number from 0 to 1)): "
                           "row 3 (id c), column p: '1.2' is above 1")


def test_a_number_range_and_a_closed_set_of_labels(tmp_path):
    rules = [{"column": "price", "kind": "number", "min": 0.5, "max": 10},
             {"column": "label", "kind": "label", "vocabulary": ["0", "1"]}]
    good = submit(tmp_path, "id,price,label", ["a,0.5,1", "b,10,0", "c,3,1.0", "d,7.25,0"])
    table = check_submission(good, IDS, "id", ["price", "label"], None, rules=rules_of(rules, None))
    assert list(table["label"]) == ["1", "0", "1.0", "0"]  # 1.0 is the label 1, as accuracy reads it
    bad = submit(tmp_path, "id,price,label", ["a,0.4,1", "b,10,2", "c,3,1", "d,7,0"])
    text = refused(bad, rules, ["price", "label"], None)
    assert "row 1 (id a), column price: '0.4' is below 0.5" in text
    assert "row 2 (id b), column label: '2' is not in the vocabulary" in text


def test_a_column_the_metric_does_not_score_is_checked_too(tmp_path):
    path = submit(tmp_path, "id,y,confidence", ["a,1,0.5", "b,2,2", "c,3,0.1", "d,4,0.9"])
    rules = rules_of([{"column": "confidence", "kind": "probability"}], None)
    with pytest.raises(SubmissionError, match=r"row 2 \(id b\), column confidence: '2' is above 1"):
        check_submission(path, IDS, "id", ["y"], "mae", ["id", "y", "confidence"], rules=rules)


def test_the_rule_message_replaces_the_metrics_own_for_its_column(tmp_path):
    path = submit(tmp_path, "id,p", ["a,high", "b,0.1", "c,0.2", "d,0.3"])
    text = refused(path, [{"column": "p", "kind": "probability"}], ["p"], "mae")
    assert "row 1 (id a), column p: 'high' is not a number" in text
    assert "are not numbers" not in text


def test_a_missing_vocabulary_copy_is_the_tasks_fault(tmp_path):
    with pytest.raises(VocabularyError, match="the task's copy of its vocabulary file key.csv cannot be read"):
        rules_of([RANKING], tmp_path / "private")


# --- a bundled task: fathomnet's categories, through Validate Submission and scoring -----------

REPO = Path(__file__).resolve().parents[2]


def _build(tmp_path_factory, name: str, text: str):
    import shutil

    from mlab.build import load_build
    from mlabc.api import compile_paths

    root = tmp_path_factory.mktemp(name)
    shutil.copytree(REPO / "tasks" / "fathomnet", root / "fathomnet", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "fathomnet.mlab").write_text(text)
    compiled, manifest = compile_paths([str(root / "fathomnet.mlab")], root / "build")
    assert manifest is not None, [str(d) for d in compiled.diagnostics]
    return load_build(root / "build").task("fathomnet")


@pytest.fixture(scope="module")
def fathomnet_builds(tmp_path_factory):
    """fathomnet as bundled, and the same task without its column constraints."""
    text = (REPO / "tasks" / "fathomnet.mlab").read_text()
    rule = '    column "categories" ranking max 20 from "category_key.csv:id"\n'
    assert rule in text
    unconstrained = text.replace(' {\n' + rule + '  }\n', '\n')
    return _build(tmp_path_factory, "constrained", text), _build(tmp_path_factory, "unconstrained", unconstrained)


@pytest.fixture(scope="module")
def fathomnet_run(fathomnet_builds, session_cache, tmp_path_factory):
    """A run of the bundled fathomnet (lite), made once for these tests."""
    from mlab.run.folder import Run

    task = fathomnet_builds[0]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLAB_CACHE", str(session_cache))
        run = Run.create(task, task.build.agent("research"), tmp_path_factory.mktemp("runs"))
        yield run
    run.close()


def validate(run):
    """What Validate Submission answers (the check its child process runs, here in this process)."""
    from mlab.scoring.validation import SubmissionValidator, validate_in_child

    return validate_in_child(SubmissionValidator(run).parts, run.workspace.root, {}, {})


def _answers(run):
    import pandas as pd

    return pd.read_csv(run.private_dir / "answers.csv", dtype=str, keep_default_na=False)


def test_validate_submission_and_scoring_refuse_a_bad_ranking_with_the_same_words(fathomnet_run):
    from mlab.failure import FailureMode
    from mlab.scoring.score import score_workspace

    run = fathomnet_run
    table = _answers(run)
    table.loc[2, "categories"] = "1 1 banana"
    table.to_csv(run.workspace.root / "submission.csv", index=False)
    observation = validate(run)
    problem = (f"row 3 (id {table.loc[2, 'id']}), column categories: '1' appears twice; "
               "'banana' is not in the vocabulary")
    assert observation.status == "error" and problem in observation.text
    assert "a ranking of at most 20 distinct items of category_key.csv column id" in observation.text
    score = score_workspace(run.task, "lite", run.workspace.root, run.private_dir)
    assert score.value is None and score.failure_mode == FailureMode.SUBMISSION_FORMAT_ERROR
    assert problem in score.detail


def test_the_agents_copy_of_the_vocabulary_changes_nothing(fathomnet_run):
    run = fathomnet_run
    table = _answers(run)
    table.loc[0, "categories"] = "banana"
    table.to_csv(run.workspace.root / "submission.csv", index=False)
    key = run.workspace.root / "category_key.csv"
    key.chmod(0o644)
    original = key.read_text()
    key.write_text(original + "banana,Banana,fruit\n")  # the agent's copy: not what is checked
    try:
        observation = validate(run)
    finally:
        key.write_text(original)
    assert observation.status == "error" and "'banana' is not in the vocabulary" in observation.text


def test_a_valid_submission_scores_as_it_did_without_the_constraint(fathomnet_builds, fathomnet_run):
    from mlab.scoring.score import score_workspace

    run = fathomnet_run
    table = _answers(run)
    table["categories"] = [" ".join(reversed(c.split())) for c in table["categories"]]  # valid, imperfect
    table["osd"] = 0.5
    table.to_csv(run.workspace.root / "submission.csv", index=False)
    assert validate(run).status == "ok", validate(run).text
    constrained, unconstrained = fathomnet_builds
    with_rule = score_workspace(constrained, "lite", run.workspace.root, run.private_dir)
    without = score_workspace(unconstrained, "lite", run.workspace.root, run.private_dir)
    assert with_rule.failure_mode is None and 0 < with_rule.value < 1
    assert with_rule.value == without.value


def test_the_tasks_copy_of_a_public_vocabulary_is_not_a_leak(tmp_path):
    from mlab.audit.leaks import leak_findings

    public, private = tmp_path / "public", tmp_path / "private"
    (private / VOCABULARY_DIR).mkdir(parents=True)
    public.mkdir()
    key = "id,name\np1,crab\np2,eel\n"
    (public / "key.csv").write_text(key)
    (private / VOCABULARY_DIR / "key.csv").write_text(key)
    (private / "copied.csv").write_text("id,secret\n1,2\n")
    (public / "copied.csv").write_text("id,secret\n1,2\n")
    declared = {"source": {"kind": "csv", "value": "rows.csv"}, "split": {"method": "none"},
                "public": ["key.csv", "copied.csv"], "private": ["copied.csv"], "answers": [], "id": "id"}
    assert leak_findings(Variant.of(declared), public, private) == []
    (private / "answers.csv").write_text("id,secret\n1,2\n")
    assert leak_findings(Variant.of(dict(declared, private=["answers.csv"])), public, private) == \
        ["public copied.csv is a copy of the private answers.csv"]


def test_the_audit_finds_answers_that_break_the_tasks_own_rule(fathomnet_run):
    from mlab.documents.view import replace
    from mlab.scoring.constraints import answer_problems

    run = fathomnet_run
    assert answer_problems(run.task, "lite", run.private_dir) == []
    strict = [Constraint.of(dict(RANKING, column="categories", at_most=1, vocabulary_file="category_key.csv"))]
    view = replace(run.task.view, submission=replace(run.task.view.submission, constraints=tuple(strict)))
    task = type("Task", (), {"view": view, "variant": run.task.variant})()
    problems = answer_problems(task, "lite", run.private_dir)
    assert len(problems) == 1 and problems[0].startswith("the answers answers.csv: ")
    assert "items, more than 1" in problems[0]
