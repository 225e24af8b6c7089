"""The process driving an agent never imports pandas or scikit-learn: the tabular scorer and the
Validate Submission check run in a child interpreter, with the same answers."""
from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

import mlab.scoring.child as child
from mlab.errors import MlabError
from mlab.scoring.score import score_run
from mlab.scoring.validation import install


def test_the_modules_of_a_run_import_no_pandas_or_scikit_learn():
    code = ("import sys, mlab.agent.loop, mlab.cli.run, mlab.run.folder, mlab.scoring.evaluate, "
            "mlab.scoring.validation, mlab.search.engine\n"
            "print(sorted(m for m in ('pandas', 'sklearn', 'numpy') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.fixture
def children(monkeypatch):
    started = []
    real = child.subprocess.run

    def counted(command, **options):
        started.append(command)
        return real(command, **options)

    monkeypatch.setattr(child.subprocess, "run", counted)
    return started


def test_validate_submission_and_the_final_score_come_from_a_child_process(new_run, children):
    run = new_run()
    install(run)
    ids = list(pd.read_csv(run.workspace.root / "test.csv", dtype=str)["Id"])
    (run.workspace.root / "submission.csv").write_text("Id,SalePrice\n" + "".join(f"{i},180000\n" for i in ids))
    observation = run.step("Validate Submission", {})
    assert observation.status == "ok" and "is valid" in observation.text
    score = score_run(run)
    assert score.submitted and score.value is not None and score.value > 0
    assert [c[1:3] for c in children if "mlab.scoring.child" in c] == [["-m", "mlab.scoring.child"]] * 2


def test_a_child_that_dies_is_a_one_line_error():
    with pytest.raises(MlabError, match="scoring failed in its child process: .*SystemExit|scoring failed"):
        child.call("sys:exit", 3)


def test_an_outside_agent_s_validate_is_held_to_the_run_s_memory_limit(new_run):
    from types import SimpleNamespace

    from mlab.external.runner import ExternalRunner

    run = new_run()
    run.step("Write File", {"file_name": "submission.csv", "content": "Id,SalePrice\n1461,1.0\n"})
    run.scripts.memory_bytes = 64 << 20   # too little for the check's interpreter with pandas
    with pytest.raises(MlabError, match=r"more memory than the run's limit \(64 MiB\)"):
        ExternalRunner._validate(SimpleNamespace(run=run))   # the gateway's validate, for an outside agent
    run.scripts.memory_bytes = None
    assert "submission" in ExternalRunner._validate(SimpleNamespace(run=run))
