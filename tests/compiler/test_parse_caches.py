"""The compiler's caches of parsed files and analysed templates: used for unchanged input only."""
from __future__ import annotations

import sys

import pytest

from mlabc import ast_cache
from mlabc.diagnostics import DiagnosticError
from mlabc.lower import jinja_analysis

TEXT = b'task t {\n  title "T"\n}\n'


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MLAB_CACHE", str(tmp_path / "cache"))
    jinja_analysis.analyse.cache_clear()
    jinja_analysis._stored.cache_clear()
    yield tmp_path / "cache"
    jinja_analysis.analyse.cache_clear()
    jinja_analysis._stored.cache_clear()


def test_an_unchanged_file_is_read_from_the_cache_and_a_changed_one_is_parsed(cache, monkeypatch):
    import mlabc.parser as parser

    first = ast_cache.parse_module(TEXT, "a.mlab")
    assert list(cache.rglob("*.pickle"))
    real = parser.parse_bytes
    calls = []
    monkeypatch.setattr(parser, "parse_bytes", lambda data, path: calls.append(path) or real(data, path))
    assert ast_cache.parse_module(TEXT, "a.mlab") == first and calls == []
    changed = ast_cache.parse_module(TEXT.replace(b'"T"', b'"U"'), "a.mlab")
    assert calls == ["a.mlab"] and changed.decls[0] != first.decls[0]
    ast_cache.parse_module(TEXT, "b.mlab")  # the same text elsewhere: its spans name the other file
    assert calls == ["a.mlab", "b.mlab"]


def test_a_file_that_does_not_parse_is_reported_every_time_and_never_stored(cache):
    for _ in range(2):
        with pytest.raises(DiagnosticError) as error:
            ast_cache.parse_module(b"task t {\n  title\n", "bad.mlab")
        assert error.value.diagnostics[0].span.path == "bad.mlab"
    assert not list(cache.rglob("*.pickle"))


def test_a_damaged_cache_entry_is_parsed_again(cache):
    first = ast_cache.parse_module(TEXT, "a.mlab")
    for entry in cache.rglob("*.pickle"):
        entry.write_bytes(b"not a pickle")
    assert ast_cache.parse_module(TEXT, "a.mlab") == first


def test_template_analyses_are_read_back_without_jinja(cache, monkeypatch):
    assert jinja_analysis.analyse("{{ task.problem }} {{ step }}") == frozenset({"task", "step"})
    broken = jinja_analysis.analyse("{% if x %}never closed")
    assert isinstance(broken, tuple) and broken[0] == 1
    jinja_analysis.analyse.cache_clear()
    jinja_analysis._stored.cache_clear()
    monkeypatch.setitem(sys.modules, "jinja2", None)  # importing Jinja now fails
    assert jinja_analysis.analyse("{{ task.problem }} {{ step }}") == frozenset({"task", "step"})
    assert jinja_analysis.analyse("{% if x %}never closed") == broken
    with pytest.raises(ImportError):
        jinja_analysis.analyse("{{ a_new_template }}")  # a text not analysed before needs Jinja
