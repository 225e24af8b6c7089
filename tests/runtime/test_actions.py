"""Dispatching actions: lookup, coercion and validation, and what each file primitive answers."""
from __future__ import annotations

import pytest

from mlab.actions import primitives
from mlab.actions.table import ActionRejected, ActionTable


@pytest.fixture
def table(house_task):
    return ActionTable(house_task.build.agent("research").actions)


@pytest.mark.parametrize("spelling", ["Inspect Script Lines", "inspect script lines", " Inspect  Script Lines ",
                                      "inspect_script_lines", "InspectScriptLines", "INSPECT-SCRIPT-LINES"])
def test_action_names_match_exactly_then_forgivingly(table, spelling):
    prepared = table.prepare(spelling, {"script_name": "a.py", "start_line_number": 1, "end_line_number": 2})
    assert prepared.name == "Inspect Script Lines"


def test_hidden_actions_are_dispatched_too(table):
    assert not table.actions["Read File"].shown
    assert table.prepare("Read File", {"file_name": "a"}).primitive == "read_file"


def test_unknown_action_lists_the_valid_ones_with_a_hint(table):
    with pytest.raises(ActionRejected) as rejected:
        table.prepare("Execute Scrpt", {"script_name": "a.py"})
    text = str(rejected.value)
    assert "there is no action named 'Execute Scrpt'. Did you mean 'Execute Script'?" in text
    assert "Valid actions: List Files, Copy File" in text


@pytest.mark.parametrize(("given", "expected"), [
    ({"script_name": "a.py", "start_line_number": "5", "end_line_number": " 9 "}, (5, 9)),
    ({"script_name": ["a.py"], "start_line_number": 5.0, "end_line_number": 9}, (5, 9)),
    ({"Script_Name": "a.py", "start line number": 5, "END_LINE_NUMBER": 9}, (5, 9)),
    ('{"script_name": "a.py", "start_line_number": 5, "end_line_number": 9}', (5, 9)),
])
def test_obvious_input_mistakes_are_coerced(table, given, expected):
    prepared = table.prepare("Inspect Script Lines", given)
    assert prepared.inputs == {"script_name": "a.py", "start_line_number": expected[0],
                               "end_line_number": expected[1]}


def test_a_bare_value_is_the_input_of_a_one_input_action(table):
    assert table.prepare("List Files", ".").inputs == {"dir_path": "."}
    assert table.prepare("Execute Script", "train.py").inputs == {"script_name": "train.py"}


def test_booleans_and_floats_are_coerced_from_text():
    from mlab.actions.table import coerce_value

    assert coerce_value("true", "bool") is True and coerce_value("No", "bool") is False
    assert coerce_value("0.5", "float") == 0.5 and coerce_value(3, "float") == 3.0
    assert coerce_value("five", "int") == "five"  # left for the schema to report


def test_missing_and_extra_fields_are_reported_with_the_usage(table):
    with pytest.raises(ActionRejected) as rejected:
        table.prepare("Copy File", {"source": "a", "target": "b"})
    text = str(rejected.value)
    assert "the input of Copy File is wrong: missing 'destination'; unknown field 'target' " \
           "(this action takes: source, destination)" in text
    assert 'Action: Copy File\nAction Input: {\n    "source": [the file to copy' in text


def test_wrong_types_are_reported_by_the_schema(table):
    with pytest.raises(ActionRejected, match="start_line_number: 'five' is not of type 'integer'"):
        table.prepare("Inspect Script Lines", {"script_name": "a", "start_line_number": "five", "end_line_number": 2})
    with pytest.raises(ActionRejected, match="must be a JSON object"):
        table.prepare("Copy File", [1, 2])


def test_an_exception_inside_a_primitive_is_an_observation(new_run):
    run = new_run()

    def broken(ctx, inputs, params):
        raise RuntimeError("boom")

    run.table.primitives.implement("list_files", broken)
    observation = run.step("List Files", {"dir_path": "."})
    assert observation.status == "error"
    assert "List Files failed with an internal error of the harness (RuntimeError: boom)" in observation.text
    assert "RuntimeError" in run.records[-1]["harness_error"]
    assert run.step("Read File", {"file_name": "train.py"}).status == "ok"


def test_model_backed_actions_say_a_model_is_needed(new_run):
    run = new_run()
    observation = run.step("Understand File", {"file_name": "train.py", "things_to_look_for": "the model"})
    assert observation.status == "error" and "needs a language model" in observation.text


def test_list_files_marks_folders_and_read_only_files(new_run):
    run = new_run()
    run.step("Write File", {"file_name": "notes/a.txt", "content": "x"})
    text = run.step("List Files", {"dir_path": "."}).text
    assert "notes/" in text.splitlines()
    assert any(line.startswith("train.csv  (") and "read-only" in line for line in text.splitlines())
    assert "does not exist" not in text
    assert "there is no folder 'nope'" in run.step("List Files", {"dir_path": "nope"}).text


def test_read_file_keeps_head_and_tail_of_long_files(new_run):
    run = new_run()
    content = "HEAD" + "x" * 50000 + "TAIL"
    run.step("Write File", {"file_name": "long.txt", "content": content})
    text = run.step("Read File", {"file_name": "long.txt"}).text
    assert text.startswith("HEAD") and text.endswith("TAIL") and len(text) < 20500
    assert "characters omitted" in text
    assert "did you mean 'long.txt'" in run.step("Read File", {"file_name": "lng.txt"}).text


@pytest.mark.parametrize(("start", "end", "expected"), [
    (1, 3, "a.py, lines 1-3 of 250:\n1: line 1\n2: line 2\n3: line 3"),
    (240, 300, "a.py, lines 240-250 of 250 (the file ends at line 250):"),
    (1, 250, "a.py, lines 1-100 of 250 (at most 100 lines are shown per call; continue from line 101):"),
])
def test_inspect_lines_bounds(new_run, start, end, expected):
    run = new_run()
    run.step("Write File", {"file_name": "a.py", "content": "".join(f"line {i}\n" for i in range(1, 251))})
    observation = run.step("Inspect Script Lines", {"script_name": "a.py", "start_line_number": start,
                                                    "end_line_number": end})
    assert observation.status == "ok" and observation.text.startswith(expected)
    assert observation.text.count("\n") == min(end, 250, start + 99) - start + 1


@pytest.mark.parametrize(("start", "end", "message"), [
    (0, 5, "start_line_number must be 1 or more"),
    (300, 310, "start_line_number 300 is past the end of a.py, which has 250 lines"),
    (9, 3, "end_line_number (3) is before start_line_number (9)"),
])
def test_inspect_lines_rejects_impossible_ranges(new_run, start, end, message):
    run = new_run()
    run.step("Write File", {"file_name": "a.py", "content": "".join(f"line {i}\n" for i in range(1, 251))})
    observation = run.step("Inspect Script Lines", {"script_name": "a.py", "start_line_number": start,
                                                    "end_line_number": end})
    assert observation.status == "error" and message in observation.text


def test_undo_walks_back_through_every_kind_of_edit(new_run):
    run = new_run()
    script = run.workspace.root / "train.py"
    original = script.read_text()
    run.step("Write File", {"file_name": "train.py", "content": "v1\n"})
    run.step("Append File", {"file_name": "train.py", "content": "v2\n"})
    run.step("Write File", {"file_name": "other.py", "content": "other\n"})
    run.step("Copy File", {"source": "other.py", "destination": "train.py"})
    assert script.read_text() == "other\n"
    assert "back to its content before the last edit (2 earlier versions left)" in \
        run.step("Undo Edit Script", {"script_name": "train.py"}).text
    assert script.read_text() == "v1\nv2\n"
    run.step("Undo Edit Script", {"script_name": "./train.py"})
    assert script.read_text() == "v1\n"
    run.step("Undo Edit Script", {"script_name": "train.py"})
    assert script.read_text() == original
    last = run.step("Undo Edit Script", {"script_name": "train.py"})
    assert last.status == "error" and "no earlier version of train.py" in last.text
    assert "did not exist before its first edit" in run.step("Undo Edit Script", {"script_name": "other.py"}).text
    assert not (run.workspace.root / "other.py").exists()


def test_append_log_writes_the_run_log_not_the_workspace(new_run):
    run = new_run()
    observation = run.step("Append Summary to Research Log", {"content": "baseline MAE 20,000"})
    assert observation.status == "ok"
    assert (run.dir / "research_log.md").read_text() == "baseline MAE 20,000\n"
    assert not any("research_log" in p.name for p in run.workspace.root.iterdir())
    assert run.records[-1]["research_log"] == "baseline MAE 20,000\n"


def test_copy_into_a_folder_keeps_the_name(new_run):
    run = new_run()
    run.step("Write File", {"file_name": "backup/keep.txt", "content": "x"})
    assert run.step("Copy File", {"source": "train.py", "destination": "backup"}).status == "ok"
    assert (run.workspace.root / "backup" / "train.py").is_file()


def test_only_python_files_are_executed(new_run, stand_in_sandbox):
    run = new_run()
    observation = run.step("Execute Script", {"script_name": "train.csv"})
    assert observation.status == "error" and "not a Python script" in observation.text


def test_a_huge_file_is_read_by_its_ends_and_inspected_by_streaming(new_run):
    run = new_run()
    big = run.workspace.root / "big.txt"
    with open(big, "w") as handle:
        handle.write("FIRST LINE\n")
        for i in range(400_000):
            handle.write(f"row {i} " + "x" * 40 + "\n")
        handle.write("LAST LINE\n")
    text = run.step("Read File", {"file_name": "big.txt"}).text
    assert text.startswith("FIRST LINE") and text.rstrip().endswith("LAST LINE")
    assert "the middle of this" in text and len(text) < 20500
    lines = run.step("Inspect Script Lines", {"script_name": "big.txt", "start_line_number": 400_001,
                                              "end_line_number": 400_005}).text
    assert lines.startswith("big.txt, lines 400001-400002 of 400002 (the file ends at line 400002):")
    assert lines.endswith("400002: LAST LINE")


def test_binary_files_are_not_shown_as_text(new_run):
    run = new_run()
    (run.workspace.root / "model.bin").write_bytes(b"\x00\x01\x02" * 100)
    for action, inputs in [("Read File", {"file_name": "model.bin"}),
                           ("Inspect Script Lines", {"script_name": "model.bin", "start_line_number": 1,
                                                     "end_line_number": 2})]:
        observation = run.step(action, inputs)
        assert observation.status == "error" and "is a binary file (300 bytes)" in observation.text
