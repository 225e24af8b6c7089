"""Fixtures of the external-agent tests: the agent tests' caches and tiny task, and one cache of
agent environments for the whole session (MLAB_AGENT_ENVS, when set, keeps it between sessions)."""
import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).parent.parent / "agent"))  # agent_helpers, fake_openai


@pytest.fixture(scope="session")
def agent_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("mlab-cache")


@pytest.fixture(scope="session")
def agent_envs(tmp_path_factory) -> Path:
    """Where agent environments are made: once per session (or kept in $MLAB_AGENT_ENVS)."""
    kept = os.environ.get("MLAB_AGENT_ENVS")
    return Path(kept) if kept else tmp_path_factory.mktemp("agent-envs")


@pytest.fixture(autouse=True, scope="module")
def _mlab_environment(agent_cache, agent_envs, tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLAB_CACHE", str(agent_cache))
        patch.setenv("MLAB_AGENT_ENVS", str(agent_envs))
        patch.setenv("SCIKIT_LEARN_DATA", str(tmp_path_factory.mktemp("sklearn-data")))
        patch.setenv("ANTHROPIC_API_KEY", "sk-ant-never-enters-the-sandbox")
        patch.setenv("OPENAI_API_KEY", "sk-never-enters-the-sandbox")
        yield


@pytest.fixture(scope="session")
def tiny_task(tmp_path_factory) -> Path:
    from agent_helpers import write_tiny_task

    folder = tmp_path_factory.mktemp("tiny")
    source = write_tiny_task(folder)
    source.write_text(source.read_text().replace('use std "agents"', 'use std "agents"\nuse std "external"'))
    return source
