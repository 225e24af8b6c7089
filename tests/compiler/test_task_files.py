"""Task-file checks that are not errors: spellings the runtime accepts are accepted and normalised."""
from __future__ import annotations

from mlabc.authoring.explain.example import check_example, example_task


def test_a_read_only_path_with_a_leading_dot_slash_is_accepted_and_normalised():
    compiled = check_example(example_task(extra='  read_only ["./train.csv", "env/"]\n'.replace("env/", "./train.py")))
    assert compiled.diagnostics == []
    ir, _ = compiled.tasks["toy"]
    assert ir["read_only"] == ["train.csv", "train.py"]


def test_a_baseline_script_spelt_with_dot_slash_is_found():
    compiled = check_example(example_task(('baseline run "train.py"', 'baseline run "./train.py"')))
    assert compiled.diagnostics == []
