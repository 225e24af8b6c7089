"""Community files pinned to an earlier release of the standard library keep that release's `show`
lists, so a release never breaks them; an unpinned file that a release breaks fails at its own
lines with the explained error (E309), never inside tasks/std/, and its hint, applied as printed,
makes it check clean.

tests/compiler/community/ holds files pinned to release 2: an agent extending `research` with an
action set of its own, one whose set extends `core`, a task played by a std agent. They are
checked against this release, and against a simulated next one in which `research` comes to
show a new action of `core` (a copy of the library in a std/ folder beside them)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import re

import pytest

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
    shows = {**release.get("shows", {}), str(release["version"] + 1): ["Peek Data"]}
    (std / "release.json").write_text(json.dumps({**release, "version": release["version"] + 1, "shows": shows}))
    actions = (std / "actions.mlab").read_text()
    (std / "actions.mlab").write_text(actions.replace("actions core {\n", "actions core {\n" + NEW_ACTION, 1))
    agents = (std / "agents.mlab").read_text()
    shown = '"List Files", "Copy File",'
    assert shown in agents
    (std / "agents.mlab").write_text(agents.replace(shown, '"List Files", "Peek Data", "Copy File",', 1))
    return folder


def apply_hint(text: str, diagnostic) -> str:
    """The E309 hint applied as printed: its `hide [...]` added to the agent, after its `actions` line."""
    hide = re.match(r"add `(hide \[.*?\])` to agent `([\w-]+)`", diagnostic.hint)
    assert hide, diagnostic.hint
    lines = text.split("\n")
    at = diagnostic.span.line - 1
    assert lines[at].strip().startswith("actions"), lines[at]
    lines.insert(at + 1, "  " + hide.group(1))
    return "\n".join(lines)


def test_a_release_that_shows_a_new_action_keeps_the_pinned_files_compiling(tmp_path):
    folder = _next_release(tmp_path)
    for name in FILES:
        compiled = _check(folder, name)
        assert compiled.ok, [str(d) for d in compiled.diagnostics]


def test_the_same_file_unpinned_is_told_at_its_own_line_and_the_hint_fixes_it(tmp_path):
    folder = _next_release(tmp_path)
    text = (folder / "lean-agents.mlab").read_text().replace('use std "agents" version 2', 'use std "agents"')
    (folder / "unpinned.mlab").write_text(text)
    (diagnostic,) = _check(folder, "unpinned.mlab").diagnostics
    assert diagnostic.code == "E309"
    assert Path(diagnostic.span.path).name == "unpinned.mlab" and diagnostic.span.line == 27
    assert "inherits a `show` list" in diagnostic.message and "'Peek Data'" in diagnostic.message
    assert 'add `hide ["Peek Data"]` to agent `lean-research`' in diagnostic.hint
    (folder / "unpinned.mlab").write_text(apply_hint(text, diagnostic))
    fixed = _check(folder, "unpinned.mlab")
    assert fixed.ok, [str(d) for d in fixed.diagnostics]


LEAN_RELEASE_1 = (COMMUNITY / "lean-agents.mlab").read_text().replace('"Validate Submission", ', "")


def test_a_file_pinned_to_release_1_keeps_release_1s_show_list(tmp_path):
    """Release 2 made `research` show Validate Submission: a set written for release 1 lacks it."""
    pinned = tmp_path / "lean.mlab"
    pinned.write_text(LEAN_RELEASE_1.replace("version 2", "version 1"))
    compiled = check_paths([str(pinned)])
    assert compiled.ok, [str(d) for d in compiled.diagnostics]
    # hiding the action release 2 added (as E309's hint said before the pin was kept) hides nothing
    pinned.write_text(LEAN_RELEASE_1.replace("version 2", "version 1")
                      .replace('"Copy File",', '"Copy File", "Validate Submission",'))
    assert check_paths([str(pinned)]).ok


def test_a_pinned_agent_over_core_shows_what_its_release_showed(tmp_path):
    text = 'use std "agents" version VERSION\n\nagent mine extends research {\n  history 2 steps\n}\n'
    shown = {}
    for version in (1, 2):
        path = tmp_path / f"mine{version}.mlab"
        path.write_text(text.replace("VERSION", str(version)))
        compiled = check_paths([str(path)])
        assert compiled.ok, [str(d) for d in compiled.diagnostics]
        shown[version] = set(compiled.agents["mine"].ir["shown"])
    assert shown[2] - shown[1] == {"Validate Submission"}


@pytest.mark.parametrize("parent", ["research", "research-retrieval", "react", "simple", "research-tools",
                                    "basic-tools"])
def test_every_e309_hint_fixes_the_file_as_printed(parent, tmp_path):
    path = tmp_path / "lean.mlab"
    text = LEAN_RELEASE_1.replace('use std "agents" version 2', 'use std "agents"') \
        .replace("extends research {", f"extends {parent} {{")
    path.write_text(text)
    (diagnostic,) = check_paths([str(path)]).diagnostics
    assert diagnostic.code == "E309" and Path(diagnostic.span.path).name == "lean.mlab"
    path.write_text(apply_hint(text, diagnostic))
    fixed = check_paths([str(path)])
    assert fixed.ok, [str(d) for d in fixed.diagnostics]


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
