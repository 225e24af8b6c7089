"""Community files written against an earlier release of the standard library keep compiling, or
fail at their own lines with the explained error (E309), never inside tasks/std/.

tests/compiler/community/ holds files pinned to release 2: an agent extending `research` with an
action set of its own, one whose set extends `core`, a task played by a std agent. They are
checked against this release, and against a simulated next one in which `research` comes to
show a new action of `core` (a copy of the library in a std/ folder beside them)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from mlabc.api import check_paths
from mlabc.resources import std_dir

COMMUNITY = Path(__file__).resolve().parent / "community"
FILES = sorted(p.name for p in COMMUNITY.glob("*.mlab"))

NEW_ACTION = '''  action "Peek Data" {
    describe "Show the first lines of a data file."
    input    file_name: path "the file"
    returns  "its first lines"
    does     read_file
  }
'''


def _check(folder: Path, name: str):
    return check_paths([str(folder / name)])


def test_the_community_files_compile_against_this_release():
    assert FILES == ["extended-core.mlab", "lean-agents.mlab", "uses-std-agent.mlab"]
    for name in FILES:
        compiled = _check(COMMUNITY, name)
        assert compiled.ok, [str(d) for d in compiled.diagnostics]


def _next_release(tmp_path: Path) -> Path:
    """The community files beside a copy of the std library whose `research` shows a new action."""
    folder = tmp_path / "community"
    shutil.copytree(COMMUNITY, folder)
    std = folder / "std"
    shutil.copytree(std_dir(), std)
    release = json.loads((std / "release.json").read_text())
    (std / "release.json").write_text(json.dumps({**release, "version": release["version"] + 1}))
    actions = (std / "actions.mlab").read_text()
    (std / "actions.mlab").write_text(actions.replace("actions core {\n", "actions core {\n" + NEW_ACTION, 1))
    agents = (std / "agents.mlab").read_text()
    shown = '"List Files", "Copy File",'
    assert shown in agents
    (std / "agents.mlab").write_text(agents.replace(shown, '"List Files", "Peek Data", "Copy File",', 1))
    return folder


def test_a_std_agent_showing_a_new_action_is_reported_at_the_community_files_own_line(tmp_path):
    folder = _next_release(tmp_path)
    broken = _check(folder, "lean-agents.mlab")
    (diagnostic,) = broken.diagnostics
    assert diagnostic.code == "E309"
    assert Path(diagnostic.span.path).name == "lean-agents.mlab" and diagnostic.span.line == 27
    assert "inherits a `show` list" in diagnostic.message and "'Peek Data'" in diagnostic.message
    assert 'add `hide ["Peek Data"]` to agent `lean-research`' in diagnostic.hint
    # a set extending `core` gains the action; a task played by a std agent is untouched
    for name in ("extended-core.mlab", "uses-std-agent.mlab"):
        compiled = _check(folder, name)
        assert compiled.ok, [str(d) for d in compiled.diagnostics]


def test_no_diagnostic_of_a_community_file_points_into_the_standard_library(tmp_path):
    folder = _next_release(tmp_path)
    for name in FILES:
        for diagnostic in _check(folder, name).diagnostics:
            assert "/std/" not in diagnostic.span.path.replace("\\", "/"), str(diagnostic)


def test_a_pin_is_kept_by_fmt_and_written_in_the_yaml_form(tmp_path):
    from mlabc.authoring.fmt import format_text

    text = 'use std "agents" version 2\n\nagent mine extends research {\n  history 2 steps\n}\n'
    assert format_text(text, "mine.mlab") == text
    yaml = tmp_path / "mine.mlab.yaml"
    yaml.write_text("use:\n  - {std: agents, version: 2}\nagents:\n  mine:\n    extends: research\n")
    assert check_paths([str(yaml)]).ok
    yaml.write_text("use:\n  - {std: agents, version: 99}\nagents:\n  mine:\n    extends: research\n")
    (diagnostic,) = check_paths([str(yaml)]).diagnostics
    assert (diagnostic.code, diagnostic.span.line) == ("E205", 2)
    assert diagnostic.message == "the standard library has no release 99: this one is release 3"
