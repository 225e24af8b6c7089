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


TASK = '''task t {
  title   "T"
  problem "Write submission.csv with the columns Id and y."
  data lite {
    from    csv "table.csv"
    split   random 0.5 seed 1
    id      "Id"
    answers ["y"]
    public  ["train.csv", "test.csv"]
    private ["answers.csv"]
  }
  submission "submission.csv" columns ["Id", "y"]
  metric     mae on "y" lower_is_better
}
'''


def _data_errors(folder) -> list[str]:
    from mlabc.api import check_paths

    return [d.message for d in check_paths([str(folder / "t.mlab")]).diagnostics if d.code in ("E510", "E511", "E512")]


def test_a_tables_facts_are_kept_by_its_bytes(cache, tmp_path, monkeypatch):
    """The data checks read a table's answers back for the same bytes, without parsing its rows;
    a changed byte (the size and the file's times unchanged) is checked afresh."""
    import os

    from mlabc.lower import table_facts

    (tmp_path / "t.mlab").write_text(TASK)
    table = tmp_path / "table.csv"
    table.write_text("Id,y\n1,2.0\n2,4.0\n3,6.0\n")
    assert _data_errors(tmp_path) == []
    assert len(list((cache / "mlabc" / "tables").rglob("*.json"))) == 1
    parsed, real = [], table_facts.TableFacts._parsed
    monkeypatch.setattr(table_facts.TableFacts, "_parsed", lambda self: parsed.append(1) or real(self))
    assert _data_errors(tmp_path) == [] and parsed == []  # from the cache
    times = os.stat(table)
    table.write_text("Id,y\n1,2.0\n2,4.0\n1,6.0\n")  # same size
    os.utime(table, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert _data_errors(tmp_path) == ["id column 'Id' of 'table.csv' repeats '1' on lines 2 and 4"] and parsed
    parsed.clear()
    assert _data_errors(tmp_path) == ["id column 'Id' of 'table.csv' repeats '1' on lines 2 and 4"] and parsed == []
    for entry in (cache / "mlabc" / "tables").rglob("*.json"):
        entry.write_text('{"header": ["Id", "y"]}')  # damaged: worked out again
    assert _data_errors(tmp_path) == ["id column 'Id' of 'table.csv' repeats '1' on lines 2 and 4"] and parsed
    table.write_bytes(b"Id,y\n1,\xff\n")
    assert _data_errors(tmp_path) == ["data file 'table.csv' is not valid UTF-8: line 2, column 3 (byte 0xff)"]
    assert _data_errors(tmp_path) == ["data file 'table.csv' is not valid UTF-8: line 2, column 3 (byte 0xff)"]


def test_the_cache_root_follows_its_variables_and_the_working_folder(tmp_path, monkeypatch):
    """cache_root() is worked out once for each value of what it depends on: a changed variable, or
    a relative MLAB_CACHE read from another working folder, gives the new place at once."""
    from mlabc.resources import cache_root

    monkeypatch.delenv("MLAB_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == (tmp_path / "xdg" / "mlab").resolve()
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == (tmp_path / "home" / ".cache" / "mlab").resolve()
    monkeypatch.setenv("MLAB_CACHE", "relative-cache")
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        monkeypatch.chdir(tmp_path / folder)
        assert cache_root() == (tmp_path / folder / "relative-cache").resolve()
    monkeypatch.setenv("MLAB_CACHE", str(tmp_path / "absolute"))
    assert cache_root() == (tmp_path / "absolute").resolve()
