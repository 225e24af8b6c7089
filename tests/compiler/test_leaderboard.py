"""A task's `leaderboard "FILE.csv" column "score" source "..."`: its scores read at compile time
and embedded in the IR (valid against spec/task.schema.json) and the build, its checks, and the
formatter and YAML form keeping it."""
from __future__ import annotations

from mlabc.authoring.convert import convert_text
from mlabc.authoring.explain.example import SUPPORT_FILES, check_example, example_task
from mlabc.authoring.fmt import format_text
from mlabc.schemas import problems, stamp

BOARD = '  leaderboard "leaderboard.csv" column "score" source "Kaggle public leaderboard"\n'
# leaderboard.csv of the examples' support files: ten teams, 0.10 to 0.55 (an error's leaderboard)
SCORES = [0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55]


def _codes(compiled) -> list[str]:
    return [d.code for d in compiled.diagnostics]


def test_the_leaderboards_scores_are_embedded_in_the_ir():
    compiled = check_example(example_task(extra=BOARD))
    assert _codes(compiled) == []
    ir, _ = compiled.tasks["toy"]
    assert ir["references"] == {"points": [], "thresholds": None, "leaderboard": {
        "file": "leaderboard.csv", "column": "score", "source": "Kaggle public leaderboard", "scores": SCORES}}
    assert problems("task", stamp("task", {**ir, "root": "."})) == []
    # the column defaults to `score`, MLE-bench's leaderboard column
    default = check_example(example_task(extra='  leaderboard "leaderboard.csv" source "x"\n'))
    assert default.tasks["toy"][0]["references"]["leaderboard"]["column"] == "score"


def test_the_build_carries_the_scores(tmp_path):
    from mlabc.program.check import check_program
    from mlabc.program.emit import write_build
    from mlabc.program.loader import load_program
    from ruamel.yaml import YAML

    for name, content in SUPPORT_FILES.items():
        if isinstance(content, str) and "/" not in name:
            (tmp_path / name).write_text(content)
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "train.py").write_text(SUPPORT_FILES["env/train.py"])
    (tmp_path / "t.mlab").write_text(example_task(extra=BOARD))
    build = tmp_path / "build"
    write_build(check_program(load_program([tmp_path / "t.mlab"])), build)
    (tmp_path / "leaderboard.csv").unlink()  # the build needs the file no more
    doc = YAML(typ="safe").load((build / "tasks" / "toy" / "task.yaml").read_text())
    assert doc["references"]["leaderboard"]["scores"] == SCORES


def test_each_problem_of_a_leaderboard_has_its_code():
    def codes(extra: str, *changes) -> list[str]:
        return _codes(check_example(example_task(*changes, extra=extra)))

    assert codes('  leaderboard "missing.csv" source "x"\n') == ["E954"]
    assert codes('  leaderboard "../leaderboard.csv" source "x"\n') == ["E954"]
    assert codes('  leaderboard "latin1.csv" column "x" source "x"\n') == ["E954"]  # not UTF-8
    assert codes('  leaderboard "leaderboard.csv" column "private" source "x"\n') == ["E955"]
    assert codes('  leaderboard "leaderboard-text.csv" source "x"\n') == ["E956"]
    assert codes('  leaderboard "header-only.csv" column "y" source "x"\n') == ["E956"]
    assert codes('  leaderboard "leaderboard.csv"\n') == ["E950"]
    assert codes(BOARD, ('  metric   mae on "y"', '  metric   r2 on "y"')) == ["E957"]


def test_the_formatter_and_the_yaml_form_keep_the_leaderboard():
    text = format_text(example_task(extra=BOARD), "t.mlab")
    assert BOARD.strip() in text
    assert format_text(text, "t.mlab") == text
    yaml = convert_text(text, "t.mlab", "yaml")
    assert "leaderboard: {file: leaderboard.csv, column: score, source: Kaggle public leaderboard}" in yaml
    back = convert_text(yaml, "t.mlab.yaml", "mlab")
    assert BOARD.strip() in back
    ir, _ = check_example(back).tasks["toy"]
    assert ir["references"]["leaderboard"]["scores"] == SCORES
