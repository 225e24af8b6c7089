"""The docs' checkable facts: schema versions, module names, repository paths and task facts quoted
in README.md and docs/*.md must be true of the code, so that a page cannot go stale silently.

What is checked (each a pattern a page uses; a new kind of fact wants a new pattern here):
- "`spec/NAME.schema.json`, version N" and "NAME.json (`spec/NAME.schema.json`, version N": the
  schema's current version; "trace schema version N" and the last version of "Every trace version
  is read: ...": the trace version the runtime writes;
- every `mlab.x.y` / `mlabc.x.y` in backticks: a module, or a name defined in one;
- every `runtime/mlab/...`, `compiler/mlabc/...`, `tests/...`, `spec/...`, `grammars/...`, `bench/...` path in
  backticks: a file or folder of the repository;
- "TASK, which has no demonstration" / "TASK has no demonstration": TASK has none; the README's task
  table: category, metric and lite baseline as tasks/baselines.json records them.
"""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
PLACEHOLDERS = ("NAME", "TASK", "<", "*", "x.mlab", "...")


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def _found(pattern: str) -> list[tuple[str, re.Match]]:
    return [(page.name, match) for page in PAGES for match in re.finditer(pattern, _text(page))]


def _spec_version(name: str) -> int:
    return json.loads((REPO / "spec" / f"{name}.schema.json").read_text(encoding="utf-8"))["version"]


def test_quoted_schema_versions_are_the_current_ones():
    quoted = _found(r"`spec/([a-z-]+)\.schema\.json`, version (\d+)")
    assert quoted, "no page quotes a schema version any more: update this test"
    stale = [f"{page}: spec/{m[1]}.schema.json version {m[2]}, current {_spec_version(m[1])}"
             for page, m in quoted if int(m[2]) != _spec_version(m[1])]
    assert stale == []


def test_quoted_trace_versions_are_the_current_one():
    from mlab.trace import TRACE_VERSION

    assert _spec_version("trace") == TRACE_VERSION
    stale = [f"{page}: trace schema version {m[1]}" for page, m in _found(r"trace schema version (\d+)")
             if int(m[1]) != TRACE_VERSION]
    for page, match in _found(r"Every trace version is read:([^\n]*(?:\n[^\n]+)*)"):
        listed = [int(n) for n in re.findall(r"\b(\d+) \(", match[1])]
        if max(listed, default=0) != TRACE_VERSION:
            stale.append(f"{page}: 'Every trace version is read' lists up to {max(listed, default=0)}")
    assert stale == []


def _resolves(name: str) -> bool:
    """A module, or a name defined (or imported) at the top of one, or in a root package's public API
    (its `_API` table, docs/api.md), without importing it."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            continue
        rest = parts[cut:]
        if not rest:
            return True
        if len(rest) > 1 or spec.origin is None or not spec.origin.endswith(".py"):
            return False
        source = Path(spec.origin).read_text(encoding="utf-8")
        return re.search(rf"^(?:def|class|async def)\s+{re.escape(rest[0])}\b|^{re.escape(rest[0])}\s*[:=]"
                         rf"|\bimport\b[^\n]*\b{re.escape(rest[0])}\b"
                         rf"|^_API = \{{[^}}]*\"{re.escape(rest[0])}\":", source, re.MULTILINE) is not None
    return False


def test_quoted_module_names_exist():
    names = {(page, m[1]) for page, m in _found(r"`(mlabc?(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`")
             if not m[1].endswith((".lark", ".json", ".mlab", ".yaml", ".md"))
             and not any(part.isupper() for part in m[1].split("."))}  # mlab.search.NAME: a placeholder
    assert names, "no page quotes a module any more: update this test"
    assert [f"{page}: {name}" for page, name in sorted(names) if not _resolves(name)] == []


def test_quoted_repository_paths_exist():
    paths = {(page, m[1]) for page, m in _found(r"`((?:runtime|compiler|tests|spec|grammars|bench)/[A-Za-z0-9_./-]+)`")
             if not any(mark in m[1] for mark in PLACEHOLDERS)}
    assert paths, "no page quotes a repository path any more: update this test"
    assert [f"{page}: {path}" for page, path in sorted(paths) if not (REPO / path.rstrip("/")).exists()] == []


def _task_sources() -> dict[str, str]:
    """Task name → the text of the bundled .mlab file that declares it."""
    found = {}
    for path in (REPO / "tasks").glob("*.mlab"):
        for name in re.findall(r"^task\s+([a-z0-9-]+)\s*\{", _text(path), re.MULTILINE):
            found[name] = _text(path)
    return found


def _demonstrations() -> dict[str, bool]:
    """Task name → whether it declares a demonstration."""
    return {name: bool(re.search(r"^\s*demo\s+\"", text, re.MULTILINE)) for name, text in _task_sources().items()}


def test_no_page_says_a_task_with_a_demonstration_has_none():
    has = _demonstrations()
    claims = _found(r"([a-z0-9-]+),?\s+(?:which\s+)?has\s+no\s+demonstration")
    wrong = [f"{page}: {m[0]!r}" for page, m in claims if has.get(m[1])]
    assert wrong == []


def test_the_readme_task_table_matches_the_tasks_and_their_recorded_baselines():
    recorded = json.loads((REPO / "tasks" / "baselines.json").read_text(encoding="utf-8"))["baselines"]
    tasks = _task_sources()
    rows = [[cell.strip() for cell in line.split("|")[1:-1]] for line in _text(REPO / "README.md").splitlines()
            if line.startswith("| ") and line.split("|")[1].strip() in tasks]
    assert sorted(row[0] for row in rows) == sorted(tasks)
    for name, category, metric, _direction, baseline in rows:
        source = tasks[name]
        assert re.search(rf"^\s*category\s+{re.escape(category)}\b", source, re.MULTILINE), (name, category)
        assert re.search(rf"^\s*metric\s+{re.escape(metric)}\b", source, re.MULTILINE), (name, metric)
        if baseline == "timed side by side":
            assert "lite" not in recorded.get(name, {}) or recorded[name]["lite"].get("value") is None, name
        else:
            value = recorded[name]["lite"]["value"]
            assert float(baseline) == pytest.approx(value, rel=5e-3), f"{name}: README {baseline}, recorded {value}"
