"""The evaluator runner reports what an author's evaluator returned, even when the object misbehaves."""
import json

from mlab.scoring import evaluator_runner


def _outcome(tmp_path, capsys, body: str) -> dict:
    module = tmp_path / "evaluate.py"
    module.write_text(body, encoding="utf-8")
    evaluator_runner.main(["MARK", str(module), "score", str(tmp_path / "submission.csv"), str(tmp_path)])
    line = [row for row in capsys.readouterr().out.splitlines() if row.startswith("MARK ")][-1]
    return json.loads(line.removeprefix("MARK "))


def test_a_value_whose_item_method_fails_is_reported_with_that_failure(tmp_path, capsys):
    outcome = _outcome(tmp_path, capsys, """
class Odd:
    def item(self):
        raise RuntimeError("no scalar here")
    def __repr__(self):
        return "Odd()"

def score(submission, private):
    return Odd()
""")
    assert outcome["status"] == "error"
    assert outcome["message"] == "returned Odd(), not a finite number (its .item() raised RuntimeError: no scalar here)"


def test_a_value_whose_repr_fails_is_named_by_its_type(tmp_path, capsys):
    outcome = _outcome(tmp_path, capsys, """
class Hostile:
    def __repr__(self):
        raise ValueError("no")

def score(submission, private):
    return Hostile()
""")
    assert outcome["message"] == "returned <Hostile whose repr raised ValueError>, not a finite number"


def test_a_one_element_array_scores(tmp_path, capsys):
    outcome = _outcome(tmp_path, capsys, """
class Scalar:
    def item(self):
        return 0.25

def score(submission, private):
    return Scalar()
""")
    assert outcome == {"status": "ok", "value": 0.25}
