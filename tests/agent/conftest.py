"""Fixtures of the agent-loop tests: a data and build cache in a temporary folder, the tiny task.
(Offline models keep no state between runs: each ModelClient owns its own.)"""
import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).parent))  # agent_helpers and fake_openai are imported by name


@pytest.fixture(scope="session")
def agent_cache(tmp_path_factory) -> Path:
    """One MLAB_CACHE for these tests: builds, prepared data and measured baselines are made once."""
    return tmp_path_factory.mktemp("mlab-cache")


@pytest.fixture(autouse=True, scope="module")
def _mlab_environment(agent_cache, tmp_path_factory):
    """MLAB_CACHE and SCIKIT_LEARN_DATA in temporary folders; no API key reaches a test."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLAB_CACHE", str(agent_cache))
        patch.setenv("SCIKIT_LEARN_DATA", str(tmp_path_factory.mktemp("sklearn-data")))
        for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
            patch.delenv(key, raising=False)
        yield


@pytest.fixture(scope="session")
def tiny_task(tmp_path_factory) -> Path:
    """The tiny task's .mlab source (see agent_helpers.TASK_SOURCE)."""
    from agent_helpers import write_tiny_task

    return write_tiny_task(tmp_path_factory.mktemp("tiny"))
