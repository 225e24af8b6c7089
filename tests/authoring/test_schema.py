"""The JSON Schema of the YAML form: published by `mlabc schema`, in step with the compiler."""
from __future__ import annotations

import json

import jsonschema
from ruamel.yaml import YAML

from mlabc.yaml.schema import schema_text, yaml_form_schema

from authoring_cases import REPO


def test_spec_file_is_what_the_compiler_makes():
    on_disk = (REPO / "spec" / "yaml-form.schema.json").read_text(encoding="utf-8")
    assert on_disk == schema_text(), "regenerate it: python -m mlabc.yaml.schema"


def test_it_is_a_valid_json_schema_published_by_mlabc_schema(mlabc):
    jsonschema.Draft202012Validator.check_schema(yaml_form_schema())
    code, out, _ = mlabc("schema")
    assert code == 0 and "yaml-form" in out.split()
    code, out, _ = mlabc("schema", "yaml-form")
    assert code == 0 and json.loads(out) == yaml_form_schema()


def test_it_catches_what_an_editor_should_flag():
    validator = jsonschema.Draft202012Validator(yaml_form_schema())

    def problems(text: str) -> list[str]:
        return sorted(e.message for e in validator.iter_errors(YAML(typ="safe").load(text)))

    assert problems("experiments:\n  quick: {agents: [research], runs: 2, limits: {time: 10m}}\n") == []
    assert problems("experiments:\n  quick: {agents: [research], runz: 2}\n") == \
        ["Additional properties are not allowed ('runz' was unexpected)"]
    assert problems("experiments:\n  quick: {agents: [research], limits: {time: 10 minutes}}\n") == \
        ["'10 minutes' does not match '^\\\\d+(\\\\.\\\\d+)?(ms|s|m|h|d)$'"]
    assert problems("tasks:\n  t: {title: x}\n") == [f"'{key}' is a required property" for key in
                                                      sorted(["category", "problem", "starter", "metric",
                                                              "baseline", "data"])]
