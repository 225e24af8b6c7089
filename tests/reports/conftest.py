"""Fixtures of the report tests: real runs of a tiny task, made once per session by `mlab run`."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # scenarios is imported by name

from report_helpers import environment, mlab  # noqa: E402
from scenarios import SCENARIOS, write_task  # noqa: E402


@pytest.fixture(scope="session")
def task_source(tmp_path_factory) -> Path:
    return write_task(tmp_path_factory.mktemp("task"))


@pytest.fixture(scope="session")
def runs_dir(tmp_path_factory, task_source) -> Path:
    """runs/<scenario>/<run-id> for every scenario, then scored step by step (`mlab eval --intermediate`)."""
    root = tmp_path_factory.mktemp("report-runs")
    runs, replies = root / "runs", root / "replies"
    replies.mkdir()
    with environment(MLAB_CACHE=str(root / "cache"), SCIKIT_LEARN_DATA=str(root / "sklearn")):
        for scenario in SCENARIOS:
            model = scenario.model
            if model is None:
                path = replies / f"{scenario.name}.json"
                path.write_text(json.dumps(scenario.replies()))
                model = f"mlab/scripted:{path}"
            code, out, err = mlab("run", task_source, "--agent", scenario.agent, "--model", model,
                                  "--seed", scenario.seed, "--runs-dir", runs / scenario.name, "--plain",
                                  *scenario.args)
            assert code in (0, 1), f"{scenario.name}: {out}\n{err}"
            assert (next((runs / scenario.name).iterdir()) / "result.json").is_file(), f"{scenario.name}: {out}\n{err}"
        code, out, err = mlab("eval", "--intermediate", runs)
        assert code == 0, err
    return runs


@pytest.fixture(scope="session")
def run_of(runs_dir):
    """The run folder of a scenario, by name."""
    def find(name: str) -> Path:
        (folder,) = [p for p in (runs_dir / name).iterdir() if (p / "run.json").is_file()]
        return folder
    return find
