"""mlabc fmt: the canonical layout, comments kept, idempotent, and the IR never changes."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings

from mlabc.diagnostics import DiagnosticError
from mlabc.authoring.fmt import ast_shape, format_text
from mlabc.parser import parse_text

from authoring_cases import SMALL_SOURCES, build_of, comment_texts, copied, mutated, source_files, source_id


@pytest.mark.parametrize("source", source_files(), ids=source_id)
def test_formatting_keeps_the_ir_and_the_comments_and_is_idempotent(source, repo_copy):
    target = copied(source, repo_copy)
    before = build_of([target])
    assert "diagnostics" not in before, before
    text = target.read_text(encoding="utf-8")
    formatted = format_text(text, str(target))
    assert format_text(formatted, str(target)) == formatted
    assert sorted(comment_texts(formatted, "x")) == sorted(comment_texts(text, "x"))
    target.write_text(formatted, encoding="utf-8")
    assert build_of([target]) == before


MESSY = '''# header comment
use   std "agents"
experiment   quick{
        tasks all
  agents [research]   # who runs
     runs 2


  data lite
  limits {
    steps 10
    time 10m
  }
  models [
    "openai/gpt-4o-mini",   # cheap
    "anthropic/claude-3-haiku-20240307"
  ]
  # before the end
}
# at the end
'''

CANONICAL = '''# header comment
use std "agents"

experiment quick {
  tasks  all
  agents [research]  # who runs
  runs   2

  data   lite
  limits { steps 10  time 10m }
  models [
    "openai/gpt-4o-mini",  # cheap
    "anthropic/claude-3-haiku-20240307",
  ]
  # before the end
}
# at the end
'''


def test_the_canonical_layout():
    assert format_text(MESSY, "x.mlab") == CANONICAL
    assert format_text(CANONICAL, "x.mlab") == CANONICAL


def test_text_is_triple_quoted_and_reindented_and_short_text_is_not():
    source = ('use std "agents"\nagent a extends research {\n'
              'format_error """\n        Wrong: {{ error }}\n\n          {{ reply_format }}\n        """\n'
              'prompt """  one line  """\n}\n')
    assert format_text(source, "x.mlab") == (
        'use std "agents"\n\nagent a extends research {\n'
        '  format_error """\n    Wrong: {{ error }}\n\n      {{ reply_format }}\n    """\n'
        '  prompt       "one line"\n}\n')


def test_a_long_list_fills_lines_and_a_long_instruction_moves_below():
    names = ", ".join(f'"action number {i}"' for i in range(8))
    long = "x" * 90
    source = (f'use std "agents"\nagent a extends research {{\n show [{names}]\n'
              f' respond sections {{\n section "Action" action "{long}"\n'
              ' section "Action Input" json "Its input."\n }\n}\n')
    out = format_text(source, "x.mlab")
    assert '  show [\n    "action number 0", "action number 1",' in out
    assert out.count("\n  ]\n") == 1
    assert f'    section "Action" action\n      "{long}"\n' in out
    assert '    section "Action Input" json\n      "Its input."\n' in out  # one layout per block


def test_strings_keep_their_value_through_escapes():
    source = 'task t {\n  title "a \\"quoted\\" \\\\ back\\tslash\\d"\n  problem """\n    has \\""" inside\n    """\n}\n'
    out = format_text(source, "x.mlab")
    assert ast_shape(parse_text(out, "x")) == ast_shape(parse_text(source, "x"))


def test_fmt_check_names_the_files_that_would_change_and_changes_nothing(tmp_path, mlabc):
    messy, tidy = tmp_path / "messy.mlab", tmp_path / "tidy.mlab"
    messy.write_text(MESSY)
    tidy.write_text(CANONICAL)
    code, out, err = mlabc("fmt", "--check", str(tmp_path))
    assert code == 1
    assert out == f"would reformat {messy}\n"
    assert "1 file would be reformatted, 1 already formatted" in err
    assert messy.read_text() == MESSY

    code, out, _ = mlabc("fmt", "--diff", str(messy))
    assert code == 0 and out.startswith(f"--- {messy}\n") and "+  tasks  all\n" in out

    code, out, err = mlabc("fmt", str(tmp_path))
    assert (code, out) == (0, f"reformatted {messy}\n")
    assert messy.read_text() == CANONICAL
    assert mlabc("fmt", "--check", str(tmp_path))[0] == 0


def test_fmt_reports_syntax_errors_and_leaves_the_file_alone(tmp_path, mlabc):
    broken = tmp_path / "broken.mlab"
    broken.write_text('task t {\n  title "x\n}\n')
    code, out, err = mlabc("fmt", str(broken))
    assert code == 1
    assert f"{broken}:2:9: error[E102]: unterminated string" in err
    assert broken.read_text() == 'task t {\n  title "x\n}\n'


def test_fmt_usage_errors(tmp_path, mlabc):
    assert mlabc("fmt", cwd=tmp_path)[0] == 2  # no tasks/ here and no path named
    code, _, err = mlabc("fmt", str(tmp_path / "nope.mlab"))
    assert code == 3 and "no such file or folder" in err
    yaml_file = tmp_path / "t.mlab.yaml"
    yaml_file.write_text("tasks: {}\n")
    code, _, err = mlabc("fmt", str(yaml_file))
    assert code == 2 and "formats .mlab files only" in err


def test_a_comment_inside_an_entry_keeps_the_entrys_trailing_comment_in_its_column():
    """A comment between an entry's keyword and its value is printed above the entry; the entry's
    own trailing comment then joins its neighbours' column at once, so a second format changes
    nothing (the property test below found this one in a mutated cifar10.mlab)."""
    source = ('task t {\n  data full {\n    from  # why\n   torchvision "CIFAR10"  # photographs\n'
              '    split   none  # its own split\n    id      "id"\n  }\n}\n')
    once = format_text(source, "m.mlab")
    assert '    from  torchvision "CIFAR10"  # photographs\n    split none                   # its own split\n' in once
    assert format_text(once, "m.mlab") == once


# ---- property: mutations of real files that still parse ---------------------------

@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_formatting_any_parsable_mutation_keeps_its_meaning_and_comments(text):
    try:
        before = parse_text(text, "m.mlab")
    except DiagnosticError:
        assume(False)
    formatted = format_text(text, "m.mlab")
    assert ast_shape(parse_text(formatted, "m.mlab")) == ast_shape(before)
    assert sorted(comment_texts(formatted, "m")) == sorted(comment_texts(text, "m"))
    assert format_text(formatted, "m.mlab") == formatted


def test_sources_exist():
    assert any(p.name == "house-price.mlab" for p in source_files())
    assert all(isinstance(p, Path) for p in SMALL_SOURCES) and SMALL_SOURCES


def test_the_printer_knows_every_entry_of_the_language():
    from mlabc import ast as A
    from mlabc.authoring.printer import ENTRY_LAYOUT

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    missing = sorted(c.__name__ for c in subclasses(A.Entry) if c not in ENTRY_LAYOUT)
    assert missing == [], "add them to mlabc.authoring.printer.ENTRY_LAYOUT and to the YAML form"


def test_respond_tools_settings_and_search_parameters_align_in_a_column():
    source = ('agent a {\n  respond tools {\n    section "Thought" role thought "Why."\n'
              '    tool_choice auto\n    parallel ordered\n  # the fallback\n    fallback none\n  }\n'
              '  search greedy { drafts 3 debug_probability 0.5 }\n}\n')
    assert format_text(source, "x.mlab") == (
        'agent a {\n  respond tools {\n    section "Thought" role thought "Why."\n'
        '    tool_choice auto\n    parallel    ordered\n    # the fallback\n    fallback    none\n  }\n'
        '  search greedy {\n    drafts            3\n    debug_probability 0.5\n  }\n}\n')


def test_a_model_block_is_one_setting_a_line_outside_the_alignment_of_its_neighbours():
    source = ('agent a {\n  actions core\n  model main default "m/x" { temperature 0.5  max_tokens 8000 }\n'
              '  model fast default "m/y"\n  history 3 steps\n}\n')
    assert format_text(source, "x.mlab") == (
        'agent a {\n  actions core\n  model main default "m/x" {\n    temperature 0.5\n    max_tokens  8000\n  }\n'
        '  model   fast default "m/y"\n  history 3 steps\n}\n')
    canonical = format_text(source, "x.mlab")
    assert format_text(canonical, "x.mlab") == canonical


def test_the_repository_tasks_and_the_standard_library_are_formatted(mlabc):
    """CI keeps `mlabc fmt --check tasks/` passing (tasks/std/ included)."""
    from authoring_cases import TASKS

    code, out, err = mlabc("fmt", "--check", str(TASKS))
    assert (code, out) == (0, ""), out + err
    assert "std/agents.mlab" in "".join(str(p) for p in TASKS.rglob("*.mlab"))
