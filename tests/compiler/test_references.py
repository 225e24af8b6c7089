"""A task's reference points: `reference LABEL N source "..."` and `thresholds {...}`, lowered
into the task's IR (valid against spec/task.schema.json), formatted and converted to YAML."""
from __future__ import annotations

from mlabc.authoring.convert import convert_text
from mlabc.authoring.explain.example import check_example, example_task
from mlabc.authoring.fmt import format_text
from mlabc.schemas import problems, stamp

POINTS = '''  reference "expert" 0.12 source "the winning entry, 2019"
  reference best_human 0.1 source "the leaderboard's best human team"
  thresholds {
    gold   0.15
    silver 0.2
    bronze 0.3
    source "Kaggle private leaderboard"
  }
'''


def _codes(compiled) -> list[str]:
    return [d.code for d in compiled.diagnostics]


def test_reference_points_are_lowered_with_their_sources():
    compiled = check_example(example_task(extra=POINTS))
    assert _codes(compiled) == []
    ir, _ = compiled.tasks["toy"]
    assert ir["references"] == {
        "points": [{"label": "expert", "value": 0.12, "source": "the winning entry, 2019"},
                   {"label": "best_human", "value": 0.1, "source": "the leaderboard's best human team"}],
        "thresholds": {"gold": 0.15, "silver": 0.2, "bronze": 0.3, "source": "Kaggle private leaderboard"}}
    assert problems("task", stamp("task", {**ir, "root": "."})) == []
    bad = {**ir, "references": {**ir["references"], "thresholds": {"platinum": 1.0, "source": "x"}}}
    assert any("platinum" in p for p in problems("task", stamp("task", {**bad, "root": "."})))


def test_a_task_without_reference_points_has_no_references_key():
    ir, _ = check_example(example_task()).tasks["toy"]
    assert "references" not in ir


def test_each_number_needs_a_source_and_a_direction_that_fits_the_metric():
    assert _codes(check_example(example_task(extra='  reference "expert" 0.1\n'))) == ["E950"]
    assert _codes(check_example(example_task(extra='  reference "expert" 0.1 source ""\n'))) == ["E950"]
    assert _codes(check_example(example_task(extra='  thresholds {\n    gold 0.1\n  }\n'))) == ["E950"]
    behind = example_task(('  baseline run "train.py"', '  baseline 0.5 because "the starter"'),
                          extra='  reference "expert" 0.6 source "x"\n')
    assert _codes(check_example(behind)) == ["E951"]
    # accuracy is higher-is-better: gold must be the largest
    accuracy = example_task(('  metric   mae on "y"', '  metric   r2 on "y"'),
                            extra='  thresholds {\n    gold 0.8\n    silver 0.9\n    source "x"\n  }\n')
    assert _codes(check_example(accuracy)) == ["E952"]
    assert _codes(check_example(example_task(extra='  thresholds {\n    platinum 0.1\n    source "x"\n  }\n'))) \
        == ["E953"]
    twice = example_task(extra='  reference "a" 0.1 source "x"\n  reference "a" 0.2 source "y"\n')
    assert _codes(check_example(twice)) == ["E302"]


def test_the_formatter_and_the_yaml_form_keep_reference_points():
    text = format_text(example_task(extra=POINTS), "t.mlab")
    assert ' '.join('reference "expert" 0.12 source "the winning entry, 2019"'.split()) in ' '.join(text.split())
    assert format_text(text, "t.mlab") == text
    yaml = convert_text(text, "t.mlab", "yaml")
    assert "reference:" in yaml and "thresholds:" in yaml and "best_human:" in yaml
    back = convert_text(yaml, "t.mlab.yaml", "mlab")
    ir, _ = check_example(back).tasks["toy"]
    assert ir["references"]["thresholds"]["silver"] == 0.2
    assert [p["label"] for p in ir["references"]["points"]] == ["expert", "best_human"]
