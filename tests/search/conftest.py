"""Fixtures of the search tests: a compiled house-price build, hand-made tree-search agents,
scripted clients, the stand-in sandbox."""
from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
for folder in (REPO / "tests" / "runtime", Path(__file__).resolve().parent):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))  # stand_in_sandbox and search_helpers are imported by name

from search_helpers import TEMPLATES, search_block  # noqa: E402

from mlab.documents.agent import Agent  # noqa: E402
from mlab.documents.view import thaw  # noqa: E402


@pytest.fixture(scope="session")
def house_build(tmp_path_factory) -> Path:
    from mlabc.api import compile_paths

    out = tmp_path_factory.mktemp("build") / "build"
    compiled, manifest = compile_paths([str(REPO / "tasks" / "house-price.mlab")], out)
    assert manifest is not None, compiled.diagnostics
    return out


@pytest.fixture
def house_task(house_build, tmp_path_factory, monkeypatch):
    from mlab.build import load_build

    monkeypatch.setenv("MLAB_CACHE", str(tmp_path_factory.getbasetemp() / "mlab-cache"))
    return load_build(house_build).task("house-price")


@pytest.fixture
def search_agent(house_task):
    """A factory of tree-search agents made from the research agent: its actions, a search block."""
    research = house_task.build.agent("research")

    def make(**overrides):
        doc = dict(thaw(research.view), search=search_block(**overrides), format_retries=2)
        return replace(research, view=Agent.of(doc), templates={**research.templates, **TEMPLATES})

    return make


@pytest.fixture
def stand_in_sandbox():
    import stand_in_sandbox as module

    from mlab.actions.scripts import use_script_runner

    previous = use_script_runner(module)
    yield module
    use_script_runner(previous)


@pytest.fixture(params=["stand-in", "bubblewrap"])
def script_sandbox(request, monkeypatch):
    """Runs a test once with the stand-in and once in the real sandbox (bubblewrap; skipped where
    it is missing, except in CI, where it must be there: needs.missing)."""
    import stand_in_sandbox as module
    from needs import missing

    from mlab.actions.scripts import use_script_runner
    from mlab.sandbox import runner

    if request.param == "bubblewrap":
        monkeypatch.delenv(runner.NO_SANDBOX_VARIABLE, raising=False)
        usable, reason = runner.sandbox_available()
        if not usable:
            missing(f"no sandbox here: {reason}")
    previous = use_script_runner(module if request.param == "stand-in" else None)
    yield request.param
    use_script_runner(previous)


@pytest.fixture
def scripted(tmp_path):
    """Write replies to a file; the client that plays them (all tiers share the list)."""
    def make(replies: list, name: str = "replies.json"):
        from mlab.models.client import ModelClient, TierConfig
        from mlab.models.offline import OfflineModels

        path = tmp_path / name
        path.write_text(json.dumps(replies), encoding="utf-8")
        model = f"mlab/scripted:{path}"
        return ModelClient({tier: TierConfig(model) for tier in ("main", "fast", "edit")}, offline=OfflineModels())

    return make
