"""The runtime's store of validated build artifacts: read back without re-validation, never for a
stale or tampered build."""
from __future__ import annotations

import shutil

import pytest

import mlab.build as build_module
from mlab.build import load_build
from mlab.errors import BuildError

from runtime_helpers import copy_task_sources


def _compiled(tmp_path):
    from mlabc.api import compile_paths

    source = copy_task_sources(tmp_path / "src")
    out = tmp_path / "build"
    _, manifest = compile_paths([str(source)], out)
    assert manifest is not None
    return source, out


def _no_validation(monkeypatch):
    def refuse(*args):
        raise AssertionError("validated again")

    monkeypatch.setattr(build_module, "_validate", refuse)
    monkeypatch.setattr(build_module, "_parse_yaml", refuse)


def test_a_second_load_reads_the_validated_documents_without_parsing_yaml_or_validating(
        tmp_path, monkeypatch):
    monkeypatch.setenv("MLAB_CACHE", str(tmp_path / "cache"))
    _, out = _compiled(tmp_path)
    first = load_build(out)
    task, agent = first.task("house-price").view, first.agent("research")
    assert list((tmp_path / "cache" / "validated").rglob("task-*.json"))
    _no_validation(monkeypatch)
    again = load_build(out)
    assert again.task("house-price").view == task
    assert again.agent("research").view == agent.view and again.agent("research").actions == agent.actions


def test_a_tampered_artifact_is_refused_even_with_its_validated_copy_stored(tmp_path, monkeypatch):
    monkeypatch.setenv("MLAB_CACHE", str(tmp_path / "cache"))
    _, out = _compiled(tmp_path)
    load_build(out).task("house-price")  # the store now holds the task
    task_yaml = out / "tasks" / "house-price" / "task.yaml"
    task_yaml.write_text(task_yaml.read_text().replace("category:", "category: 42\nold_category:", 1))
    with pytest.raises(BuildError, match="edited after it was compiled.*task.yaml changed"):
        load_build(out)
    # not checked for freshness, the edited file is read and validated, not its stored copy
    with pytest.raises(BuildError, match="does not match spec/task.schema.json"):
        load_build(out, check_fresh=False).task("house-price")


def test_a_stale_build_is_refused_even_with_its_validated_copy_stored(tmp_path, monkeypatch):
    monkeypatch.setenv("MLAB_CACHE", str(tmp_path / "cache"))
    source, out = _compiled(tmp_path)
    load_build(out).task("house-price")
    source.write_text(source.read_text() + "\n# edited after compiling\n")
    with pytest.raises(BuildError, match=r"stale.*house-price\.mlab \(changed\)"):
        load_build(out)


def test_a_damaged_store_entry_is_read_from_the_file_again(tmp_path, monkeypatch):
    monkeypatch.setenv("MLAB_CACHE", str(tmp_path / "cache"))
    _, out = _compiled(tmp_path)
    expected = load_build(out).task("house-price").view
    for entry in (tmp_path / "cache" / "validated").rglob("task-*.json"):
        entry.write_text("{not json")
    assert load_build(out).task("house-price").view == expected


def test_a_copied_build_shares_the_store_and_a_foreign_edit_misses_it(tmp_path, monkeypatch):
    monkeypatch.setenv("MLAB_CACHE", str(tmp_path / "cache"))
    _, out = _compiled(tmp_path)
    load_build(out).task("house-price")
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    _no_validation(monkeypatch)
    assert load_build(copy).task("house-price").name == "house-price"  # same bytes: same entries
