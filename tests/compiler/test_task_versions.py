"""Task versions: `version`, `changes`, `issue` into the IR and the YAML form, the scored digests of
the manifest, and `mlabc check --since BUILD` refusing a scored change that keeps the version."""
from __future__ import annotations

import json

from mlabc import cli
from mlabc.authoring.fmt import format_text

TASK = """task toy {
  title    "Predict y"
  category canonical
  problem  "Fit y from x."
  starter  "env"
%(extra)s  data lite {
    from    csv "data.csv"
    split   random %(fraction)s seed 1
    id      "id"
    answers ["y"]
    public  ["train.csv", "test.csv"]
    private ["answers.csv"]
  }
  metric   mae on "y"
  baseline 1.0 because "the mean"
}
"""
BUMPED = '  version  2\n  changes {\n    2 "a larger test split" because "too few test rows"\n  }\n'


def _folder(tmp_path, fraction="0.2", extra=""):
    (tmp_path / "env").mkdir(exist_ok=True)
    (tmp_path / "env" / "train.py").write_text("print(1)\n")
    (tmp_path / "data.csv").write_text("id,x,y\n" + "".join(f"{i},{i},{2 * i}\n" for i in range(1, 11)))
    (tmp_path / "toy.mlab").write_text(TASK % {"extra": extra, "fraction": fraction})
    return tmp_path / "toy.mlab"


def _since(tmp_path, capsys, **kwargs):
    source = _folder(tmp_path, **kwargs)
    status = cli.main(["check", str(source), "--since", str(tmp_path / "previous")])
    return status, capsys.readouterr().err


def test_the_manifest_records_the_version_and_a_digest_per_scored_part(tmp_path, capsys):
    assert cli.main(["compile", str(_folder(tmp_path, extra=BUMPED)), "-o", str(tmp_path / "b")]) == 0
    entry = json.loads((tmp_path / "b" / "manifest.json").read_text())["tasks"]["toy"]
    assert entry["version"] == 2
    assert sorted(entry["scored"]) == ["data", "metric", "starter", "submission", "success"]
    (tmp_path / "env" / "train.py").write_text("print(2)\n")  # the starter changes: only its digest moves
    assert cli.main(["compile", str(tmp_path / "toy.mlab"), "-o", str(tmp_path / "c")]) == 0
    after = json.loads((tmp_path / "c" / "manifest.json").read_text())["tasks"]["toy"]["scored"]
    assert [part for part in after if after[part] != entry["scored"][part]] == ["starter"]


def test_a_scored_change_without_a_bump_is_an_error_and_a_bump_passes(tmp_path, capsys):
    assert cli.main(["compile", str(_folder(tmp_path)), "-o", str(tmp_path / "previous")]) == 0
    capsys.readouterr()
    assert _since(tmp_path, capsys) == (0, "")  # nothing changed
    status, err = _since(tmp_path, capsys, fraction="0.3")
    assert status == 1
    assert "error[E912]: task `toy` changed its scored parts (data) but keeps version 1" in err
    assert "toy.mlab:3:" in err or "toy.mlab:1:" in err  # located at the task (it declares no version)
    status, err = _since(tmp_path, capsys, fraction="0.3", extra=BUMPED)
    assert (status, err) == (0, "")


def test_a_version_that_goes_down_is_an_error(tmp_path, capsys):
    assert cli.main(["compile", str(_folder(tmp_path, extra=BUMPED)), "-o", str(tmp_path / "previous")]) == 0
    capsys.readouterr()
    status, err = _since(tmp_path, capsys)
    assert status == 1 and "task `toy` is version 1, but the previous build has version 2" in err


def test_a_previous_build_without_digests_is_not_compared_and_a_missing_one_is_refused(tmp_path, capsys):
    assert cli.main(["compile", str(_folder(tmp_path)), "-o", str(tmp_path / "previous")]) == 0
    manifest = tmp_path / "previous" / "manifest.json"
    document = json.loads(manifest.read_text())
    del document["tasks"]["toy"]["scored"]  # a build made before versions
    manifest.write_text(json.dumps(document))
    capsys.readouterr()
    assert _since(tmp_path, capsys, fraction="0.3") == (0, "")
    assert cli.main(["check", str(tmp_path / "toy.mlab"), "--since", str(tmp_path / "nowhere")]) == 3
    assert "no build manifest at" in capsys.readouterr().err


def test_versions_lower_into_the_ir_and_survive_fmt_and_the_yaml_form(tmp_path, capsys):
    extra = BUMPED + '  issue    "two rows repeat" since 1\n  issue    "ids leaked y" since 1 fixed 2\n'
    source = _folder(tmp_path, extra=extra)
    formatted = format_text(source.read_text(), "toy.mlab")
    assert format_text(formatted, "toy.mlab") == formatted
    assert 'issue "ids leaked y" since 1 fixed 2' in formatted and '2 "a larger test split" because' in formatted
    assert cli.main(["compile", str(source), "-o", str(tmp_path / "b")]) == 0
    task = (tmp_path / "b" / "tasks" / "toy" / "task.yaml").read_text()
    assert "version: 2" in task and "why: too few test rows" in task and "fixed: 2" in task
    (tmp_path / "y").mkdir()
    assert cli.main(["convert", str(source), "--to", "yaml", "-o", str(tmp_path / "y" / "toy.mlab.yaml")]) == 0
    for name in ("env", "data.csv"):
        (tmp_path / "y" / name).symlink_to(tmp_path / name)
    assert cli.main(["compile", str(tmp_path / "y" / "toy.mlab.yaml"), "-o", str(tmp_path / "yb")]) == 0
    yaml_task = (tmp_path / "yb" / "tasks" / "toy" / "task.yaml").read_text()
    assert yaml_task.replace(str(tmp_path / "y"), str(tmp_path)) == task
