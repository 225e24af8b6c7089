"""Fixtures of the export tests: a cache in a temporary folder, the agent tests' tiny task, and one
small run of every agent of the standard library (mlab/demo plays list, run, submit in any format)."""
import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "agent"))  # agent_helpers: the tiny task, mlab in-process


@pytest.fixture(scope="session")
def export_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("mlab-cache")


@pytest.fixture(autouse=True, scope="module")
def _mlab_environment(export_cache, tmp_path_factory):
    """MLAB_CACHE in a temporary folder; no API key reaches a test."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLAB_CACHE", str(export_cache))
        patch.setenv("SCIKIT_LEARN_DATA", str(tmp_path_factory.mktemp("sklearn-data")))
        for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
            patch.delenv(key, raising=False)
        yield


@pytest.fixture(scope="session")
def tiny_task(tmp_path_factory) -> Path:
    from agent_helpers import write_tiny_task

    return write_tiny_task(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="session")
def std_runs(tiny_task, export_cache, tmp_path_factory) -> dict:
    """agent name → its run folder: one mlab/demo run of the tiny task per agent the build holds
    (made once for both formats' tests)."""
    from export_helpers import make_std_runs

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLAB_CACHE", str(export_cache))
        for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
            patch.delenv(key, raising=False)
        return make_std_runs(tiny_task, tmp_path_factory.mktemp("std-runs"))
