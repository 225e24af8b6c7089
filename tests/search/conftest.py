"""Fixtures of the search tests: a compiled house-price build, a hand-made tree-search agent shaped
like the compiled IR (contract section 4), scripted replies, the stand-in sandbox."""
from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RUNTIME_TESTS = REPO / "tests" / "runtime"
if str(RUNTIME_TESTS) not in sys.path:
    sys.path.insert(0, str(RUNTIME_TESTS))  # stand_in_sandbox is imported by name

TEMPLATES = {
    "draft": "Draft node {{ node }} of at most {{ max_nodes }} for {{ task.title }}.\n"
             "Data:\n{{ data_preview }}\nBest so far:\n{{ journal }}\nWrite {{ code_file }}.\n",
    "improve": "Improve node {{ node }}: plan {{ parent.plan }}; {{ parent.validation }}\n{{ parent.code }}\n"
               "{{ journal }}\n",
    "debug": "Debug node {{ node }}: output {{ parent.output }}\n{{ parent.code }}\n",
    "review": "Review {{ code_file }} of {{ task.name }}:\n{{ code }}\nOutput:\n{{ output }}\n",
    "format_error": "Format problem: {{ error }} {{ reply_format }}\n",
}
PATTERN = r"validation mae: ([0-9.]+)"


def search_block(**overrides) -> dict:
    block = {"policy": "greedy", "params": {"drafts": 2, "debug_probability": 0.5, "max_debug_depth": 3},
             "parallel": 1, "code_file": "train.py",
             "score": {"from": "pattern", "pattern": PATTERN, "group": 1},
             "select": "validation", "operators": ["draft", "improve", "debug"]}
    block.update(overrides)
    return block


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
        doc = dict(research.doc, search=search_block(**overrides), format_retries=2)
        return replace(research, doc=doc, templates={**research.templates, **TEMPLATES})

    return make


@pytest.fixture
def stand_in_sandbox():
    import stand_in_sandbox as module

    from mlab.actions.scripts import use_script_runner

    previous = use_script_runner(module)
    yield module
    use_script_runner(previous)


def reply(plan: str, code: str) -> str:
    return f"{plan}\n\n```python\n{code}```\n"


def valid_code(mae: float, note: str = "") -> str:
    """A script that writes a valid constant submission and prints its made-up validation error."""
    return ("import csv\n"
            "ids = [row['Id'] for row in csv.DictReader(open('test.csv'))]\n"
            "with open('submission.csv', 'w') as out:\n"
            "    out.write('Id,SalePrice\\n' + ''.join(f'{i},180000.0\\n' for i in ids))\n"
            f"print('{note}')\n"
            f"print('validation mae: {mae}')\n")


BROKEN_CODE = "raise SystemExit('broken on purpose')\n"
NO_SUBMISSION_CODE = "print('validation mae: 1.0')\n"  # a fine score, but nothing submitted


@pytest.fixture
def scripted(tmp_path):
    """Write replies to a file; the client that plays them (all tiers share the list)."""
    def make(replies: list[str], name: str = "replies.json"):
        from mlab.models.client import ModelClient, TierConfig
        from mlab.models.offline import OfflineModels

        path = tmp_path / name
        path.write_text(json.dumps(replies), encoding="utf-8")
        model = f"mlab/scripted:{path}"
        return ModelClient({tier: TierConfig(model) for tier in ("main", "fast", "edit")}, offline=OfflineModels())

    return make


def client_resumed(make_client, replies: list[str], records: list[dict]):
    """A scripted client moved past the replies the recorded calls used (as `mlab run --resume` does)."""
    client = make_client(replies)
    used = sum(len((r.get("model") or {}).get("calls", [])) for r in records)
    model = client.tiers["main"].model
    client.offline.set_position(model, "main", used)
    return client


def tiers_of(client) -> dict:
    return {tier: {"model": config.model, "params": {}, "source": "option"} for tier, config in client.tiers.items()}
