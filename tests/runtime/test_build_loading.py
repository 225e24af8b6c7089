"""Loading builds: validation, refusal of stale and foreign builds, and finding tasks."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mlab.build import load_build, resolve_task
from mlab.cli import main
from mlab.errors import BuildError

from runtime_helpers import copy_task_sources


def compile_to(sources: list[Path], out: Path) -> Path:
    from mlabc.api import compile_paths

    _, manifest = compile_paths([str(s) for s in sources], out)
    assert manifest is not None
    return out


def test_a_fresh_build_loads_with_its_task_agent_and_templates(house_build):
    build = load_build(house_build)
    task = build.task("house-price")
    assert task.variants == ["full", "lite"]
    assert task.root.is_dir()
    agent = build.agent("research")
    assert "Execute Script" in [a.name for a in agent.actions.actions]
    assert {"prompt", "tools", "history"} <= set(agent.templates)


def test_unknown_task_or_agent_names_what_the_build_has(house_build):
    build = load_build(house_build)
    with pytest.raises(BuildError, match="no task 'house'.*house-price"):
        build.task("house")
    with pytest.raises(BuildError, match="no agent 'nobody'.*research"):
        build.agent("nobody")


def test_a_build_whose_source_changed_is_refused_naming_the_fix(tmp_path):
    source = copy_task_sources(tmp_path / "src")
    build = compile_to([source], tmp_path / "build")
    source.write_text(source.read_text() + "\n# an edit after compiling\n")
    with pytest.raises(BuildError) as refused:
        load_build(build)
    message = str(refused.value)
    assert "stale" in message and "house-price.mlab (changed)" in message
    assert f"mlabc compile {source}" in message and f"-o {build}" in message


def test_a_build_whose_input_file_vanished_is_stale(tmp_path):
    source = copy_task_sources(tmp_path / "src")
    build = compile_to([source], tmp_path / "build")
    (source.parent / "house-price" / "env" / "train.py").unlink()
    with pytest.raises(BuildError, match=r"train\.py \(missing\)"):
        load_build(build)


def test_a_build_from_another_compiler_version_is_refused(tmp_path, house_build):
    build = tmp_path / "build"
    shutil.copytree(house_build, build)
    manifest = json.loads((build / "manifest.json").read_text())
    manifest["compiler_version"] = "0.0.1"
    (build / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BuildError, match=r"made by mlabc 0\.0\.1.*recompile it with `mlabc compile"):
        load_build(build)


def test_a_build_of_another_schema_version_is_refused(tmp_path, house_build):
    build = tmp_path / "build"
    shutil.copytree(house_build, build)
    manifest = json.loads((build / "manifest.json").read_text())
    manifest["schema_version"] = 2
    (build / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BuildError, match="schema version 2"):
        load_build(build)


def test_an_edited_artifact_is_refused_and_an_invalid_one_is_named(tmp_path, house_build):
    build = tmp_path / "build"
    shutil.copytree(house_build, build)
    actions = build / "agents" / "research" / "actions.json"
    document = json.loads(actions.read_text())
    document["actions"][0]["primitive"] = 42
    actions.write_text(json.dumps(document))
    with pytest.raises(BuildError, match="edited after it was compiled"):
        load_build(build)
    unchecked = load_build(build, check_fresh=False)
    with pytest.raises(BuildError, match="does not match spec/actions.schema.json"):
        unchecked.agent("research")


def test_a_folder_without_manifest_is_not_a_build(tmp_path):
    with pytest.raises(BuildError, match="no manifest.json.*mlabc compile"):
        load_build(tmp_path)


def test_resolve_by_name_by_mlab_path_and_by_build_folder(house_build, mlab_env, tmp_path):
    by_name = resolve_task("house-price")
    assert by_name.name == "house-price"
    assert str(by_name.build.dir).startswith(str(mlab_env))
    by_path = resolve_task(str(Path(__file__).resolve().parents[2] / "tasks" / "house-price.mlab"))
    assert by_path.build.dir == by_name.build.dir
    assert resolve_task(str(house_build)).build.dir == house_build.resolve()
    assert resolve_task(str(house_build / "tasks" / "house-price")).name == "house-price"
    assert resolve_task("house-price", build_dir=house_build).build.dir == house_build.resolve()


def test_a_task_named_by_path_is_recompiled_when_its_source_changes(mlab_env, tmp_path):
    source = copy_task_sources(tmp_path / "src")
    first = resolve_task(str(source))
    assert "Predict the sale price" in first.view.title
    source.write_text(source.read_text().replace('"Predict the sale price of houses"', '"Price houses"'))
    assert resolve_task(str(source)).view.title == "Price houses"


def test_a_mlab_file_that_does_not_compile_shows_the_diagnostics(mlab_env, tmp_path):
    broken = tmp_path / "broken.mlab"
    broken.write_text("task broken {\n  title 42\n}\n")
    with pytest.raises(BuildError, match="does not compile"):
        resolve_task(str(broken))


def test_unknown_task_name_lists_known_tasks(mlab_env):
    with pytest.raises(BuildError, match="no task named 'no-such-task'.*house-price"):
        resolve_task("no-such-task")


def test_cli_refuses_an_explicit_stale_build(tmp_path, mlab_env, capsys):
    source = copy_task_sources(tmp_path / "src")
    build = compile_to([source], tmp_path / "build")
    source.write_text(source.read_text() + "\n")
    assert main(["prepare", "house-price", "--build", str(build)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("mlab: the build in") and "stale" in err and "mlabc compile" in err
    assert "Traceback" not in err
