"""mlabc convert: .mlab ↔ .mlab.yaml with comments kept, and the same IR both ways."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from ruamel.yaml import YAML

from mlabc.authoring.convert import mlab_to_yaml, yaml_to_mlab
from mlabc.yaml.write import ConvertError
from mlabc.diagnostics import DiagnosticError
from authoring_cases import comment_texts
from mlabc.parser import parse_text
from mlabc.yaml.form import parse_yaml_text

from authoring_cases import REPO, build_of, copied, mutated, source_files, source_id

SCHEMA = json.loads((REPO / "spec" / "yaml-form.schema.json").read_text())


def yaml_comment_texts(text: str) -> list[str]:
    comments: list = []
    parse_yaml_text(text, "x.mlab.yaml", comments)
    return sorted(c.text for c in comments)


@pytest.mark.parametrize("source", source_files(), ids=source_id)
def test_round_trip_keeps_the_ir_and_the_comments(source, repo_copy, mlabc):
    original = copied(source, repo_copy)
    before = build_of([original])
    assert "diagnostics" not in before, before
    code, out, _ = mlabc("convert", str(original))
    yaml_file = original.with_name(original.name + ".yaml")
    assert (code, out) == (0, f"wrote {yaml_file}\n")
    yaml_text = yaml_file.read_text(encoding="utf-8")
    assert build_of([yaml_file]) == before
    jsonschema.validate(YAML(typ="safe").load(yaml_text), SCHEMA)

    back = original.with_name("back-" + original.name)
    code, out, _ = mlabc("convert", str(yaml_file), "-o", str(back))
    assert (code, out) == (0, f"wrote {back}\n")
    yaml_file.unlink()
    assert build_of([back]) == before
    comments = sorted(comment_texts(original.read_text(encoding="utf-8"), "x"))
    assert yaml_comment_texts(yaml_text) == comments
    assert sorted(comment_texts(back.read_text(encoding="utf-8"), "x")) == comments


def test_conversion_reads_well(tmp_path, mlabc):
    source = tmp_path / "quick.mlab"
    source.write_text('# a quick look\nuse std "agents"\n\nexperiment quick {\n  agents [research]  # the main one\n'
                      '  limits { steps 10  time 10m }\n  override house-price {\n    runs 1\n  }\n}\n')
    assert mlabc("convert", str(source))[0] == 0
    assert (tmp_path / "quick.mlab.yaml").read_text() == (
        "# a quick look\nuse: [{std: agents}]\n\nexperiments:\n  quick:\n"
        "    agents: [research]  # the main one\n    limits: {steps: 10, time: 10m}\n"
        "    override:\n      house-price:\n        runs: 1\n")


def test_convert_refuses_to_overwrite_and_explains(tmp_path, mlabc):
    source = tmp_path / "quick.mlab"
    source.write_text('use std "agents"\n\nexperiment quick {\n  agents [research]\n}\n')
    code, _, err = mlabc("convert", str(source))
    assert code == 0 and "keep only one of them" in err
    code, _, err = mlabc("convert", str(source))
    assert code == 3 and f"{source}.yaml exists; pass --force" in err
    assert mlabc("convert", str(source), "--force")[0] == 0
    code, _, err = mlabc("convert", str(source), "--to", "mlab")
    assert code == 1 and "already in the mlab form" in err
    code, _, err = mlabc("convert", str(tmp_path / "missing.mlab"))
    assert code == 3 and "no such file" in err
    other = tmp_path / "notes.txt"
    other.write_text("x")
    code, _, err = mlabc("convert", str(other))
    assert code == 1 and "neither a .mlab nor a .mlab.yaml file" in err


def test_convert_reports_errors_in_the_source(tmp_path, mlabc):
    broken = tmp_path / "broken.mlab"
    broken.write_text("experiment quick {\n  agents [research\n}\n")
    code, _, err = mlabc("convert", str(broken))
    assert code == 1 and f"{broken}:3:1: error[E109]" in err
    assert not (tmp_path / "broken.mlab.yaml").exists()
    twice = tmp_path / "twice.mlab"
    twice.write_text('use std "agents"\nagent a extends research {\n  show ["List Files"]\n  show ["Read File"]\n}\n')
    code, _, err = mlabc("convert", str(twice))
    assert code == 1 and "line 4: `show` is given twice in one block" in err
    bad_yaml = tmp_path / "bad.mlab.yaml"
    bad_yaml.write_text("tasks:\n  t:\n    titel: x\n")
    code, _, err = mlabc("convert", str(bad_yaml))
    assert code == 1 and f"{bad_yaml}:3:5: error[E103]" in err


def check_text(text: str):
    """`mlabc check` of one file's text (written where its `use std` still resolves)."""
    import tempfile

    from mlabc.api import check_paths

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.mlab"
        path.write_text(text, encoding="utf-8")
        return check_paths([str(path)])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_any_parsable_mutation_converts_both_ways_with_its_comments(text):
    try:
        parse_text(text, "m.mlab")
    except DiagnosticError:
        assume(False)
    try:
        yaml_text = mlab_to_yaml(text, "m.mlab")  # reads its output back: same AST, same comments
    except ConvertError as refused:
        # Only a file that parses but that `mlabc check` rejects may lack a YAML form.
        message = str(refused)
        assert "fix what `mlabc check` reports" in message
        line = int(message.split(":")[0].removeprefix("line "))
        reported = [d for d in check_text(text).diagnostics if d.severity == "error" and d.span and d.span.line == line]
        assert reported, f"convert refused line {line}, which `mlabc check` accepts"
        assume(False)
    back = yaml_to_mlab(yaml_text, "m.mlab.yaml")
    assert sorted(comment_texts(back, "m")) == sorted(comment_texts(text, "m"))
