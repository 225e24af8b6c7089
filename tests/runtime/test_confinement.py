"""Paths stay inside the workspace and read-only files stay unchanged, however they are spelled."""
from __future__ import annotations

import os

import pytest

from mlab.actions import primitives

SECRET = "TOP-SECRET-ANSWER"
FILLERS = {"text": "some text", "string": "some text", "int": 1, "float": 1.0, "bool": True}


@pytest.fixture
def attacked_run(new_run, tmp_path):
    """A run, a secret file outside its workspace, and links planted inside pointing out."""
    run = new_run()
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    os.symlink(secret, run.workspace.root / "link.txt")
    os.symlink(tmp_path, run.workspace.root / "linkdir")
    return run, secret


def attacks(run, secret) -> list[str]:
    relative = os.path.relpath(secret, run.workspace.root)
    return [relative, str(secret), "train.py/../" + relative, "link.txt", "linkdir/secret.txt",
            "../private/answers.csv", "~/secret.txt/../../../../" + relative]


def action_for(run, primitive_name: str) -> str:
    return next(a.name for a in run.agent.actions.actions if a.primitive == primitive_name)


def act(run, primitive_name: str, inputs: dict):
    """The run's action for the primitive; a primitive its agent does not show (describe_table, of
    the core-data set) is run as the action table runs one, in the run's own context."""
    from mlab.actions.primitives import PrimitiveContext
    from mlab.actions.workspace import PathRefused
    from mlab.observation import ActionFailed, error

    if any(a.primitive == primitive_name for a in run.agent.actions.actions):
        return run.step(action_for(run, primitive_name), inputs)
    primitive = primitives.base_registry()[primitive_name]
    context = PrimitiveContext(run.workspace, run.edits, run.research_log, run.scripts, 1,
                               {"name": primitive_name}, run.services)
    try:
        return primitive.run(context, inputs, dict(primitive.params))
    except (ActionFailed, PathRefused) as problem:
        return error(str(problem))


def path_cases():
    for name, primitive in sorted(primitives.base_registry().items()):
        for argument, kind in primitive.inputs.items():
            if kind == "path":
                yield name, argument


@pytest.mark.parametrize(("primitive_name", "argument"), list(path_cases()))
def test_every_path_argument_of_every_primitive_is_confined(attacked_run, primitive_name, argument, tmp_path,
                                                            stand_in_sandbox):
    run, secret = attacked_run
    inputs = {name: ("train.py" if kind == "path" else FILLERS[kind])
              for name, kind in primitives.base_registry()[primitive_name].inputs.items()}
    if primitive_name == "copy_file" and argument == "source":
        inputs["destination"] = "copied.txt"
    before = sorted(p.name for p in tmp_path.iterdir())
    for attack in attacks(run, secret):
        observation = act(run, primitive_name, dict(inputs, **{argument: attack}))
        assert observation.status == "error", (attack, observation.text)
        assert SECRET not in observation.text
        assert secret.read_text() == SECRET
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing created outside
    assert not run.ended


def test_refusals_say_why(attacked_run):
    run, secret = attacked_run
    text = run.step("Read File", {"file_name": "../../secret.txt"}).text
    assert "leads outside the workspace" in text
    assert "is outside the workspace; use a path relative" in run.step("Read File", {"file_name": str(secret)}).text
    assert "symbolic link" in run.step("Read File", {"file_name": "link.txt"}).text


def test_paths_inside_the_workspace_work_in_any_spelling(new_run):
    run = new_run()
    root = run.workspace.root
    for spelling in ["train.py", "./train.py", "sub/../train.py", str(root / "train.py"), ".//train.py"]:
        observation = run.step("Inspect Script Lines", {"script_name": spelling, "start_line_number": 1,
                                                        "end_line_number": 1})
        assert observation.status == "ok", (spelling, observation.text)
        assert "Starter script" in observation.text


READ_ONLY_SPELLINGS = ["train.csv", "./train.csv", "a/../train.csv", ".//train.csv", "train.csv/",
                       "data_description.txt", "alias.csv", "hardlink.csv"]


@pytest.mark.parametrize("spelling", READ_ONLY_SPELLINGS + ["ABSOLUTE"])
def test_read_only_files_cannot_be_written_in_any_spelling(new_run, spelling):
    run = new_run()
    root = run.workspace.root
    os.symlink("train.csv", root / "alias.csv")
    os.link(root / "train.csv", root / "hardlink.csv")
    name = str(root / "train.csv") if spelling == "ABSOLUTE" else spelling
    protected = {p: (root / p).read_bytes() for p in ("train.csv", "data_description.txt")}
    attempts = [("Write File", {"file_name": name, "content": "x"}),
                ("Append File", {"file_name": name, "content": "x"}),
                ("Copy File", {"source": "train.py", "destination": name}),
                ("Undo Edit Script", {"script_name": name})]
    for action, inputs in attempts:
        observation = run.step(action, inputs)
        assert observation.status == "error", (action, observation.text)
        assert "read-only" in observation.text
    assert {p: (root / p).read_bytes() for p in protected} == protected


def test_a_symlink_inside_the_workspace_to_a_writable_file_is_followed(new_run):
    run = new_run()
    os.symlink("train.py", run.workspace.root / "alias.py")
    assert run.step("Append File", {"file_name": "alias.py", "content": "# more\n"}).status == "ok"
    assert (run.workspace.root / "train.py").read_text().endswith("# more\n")


def test_a_symlink_planted_by_a_script_cannot_be_read_or_written_through(new_run, tmp_path, stand_in_sandbox):
    run = new_run()
    secret = tmp_path / "outside.txt"
    secret.write_text(SECRET)
    run.step("Write File", {"file_name": "plant.py",
                            "content": f"import os\nos.symlink({str(secret)!r}, 'planted.txt')\n"})
    assert run.step("Execute Script", {"script_name": "plant.py"}).status == "ok"
    assert (run.workspace.root / "planted.txt").is_symlink()
    read = run.step("Read File", {"file_name": "planted.txt"})
    write = run.step("Write File", {"file_name": "planted.txt", "content": "overwritten"})
    assert read.status == write.status == "error"
    assert SECRET not in read.text and secret.read_text() == SECRET
