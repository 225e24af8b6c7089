"""Score with a task's own evaluator (`evaluator "file.py:function"`), in the sandbox, never in the harness.

Trust boundary: the evaluator is the task's code, trusted as the task is; the workspace is
the agent's, untrusted (babylm's evaluator loads the submitted model). So the evaluator runs
as a script in the sandbox, in a scratch folder that holds

    submission/   a copy of the workspace's plain files (no links, hard links or special files;
                  taken through mlab.confined, and a submission that is one is refused)
    private/      a copy of the task's private files, bound read-only
    evaluator/    the evaluator's file and the runner (mlab.scoring.evaluator_runner), bound read-only

and nothing else of mlab, the run folder or the caches. It gets the task's script time
and memory limits. The runner calls `function(submission_dir, private_dir)` and prints one
marked JSON line with the outcome:

- a number: the score;
- an exception whose class is named `SubmissionInvalid` (babylm's is a ValueError): the
  submission is unusable; failure mode "submission format error" with its message;
- any other exception, a value that is not a finite number, or a crash: the task's
  evaluator is at fault; a clear error naming the evaluator (a task bug, not an agent's).

A submission that makes scoring exceed the time or memory limit cannot be scored: that is
the submission's failure, said so. What the evaluator computes can still be steered by a
submission that runs code when loaded (a pickle, say); evaluators should load data formats
that run no code, as babylm's TorchScript does.
"""
from __future__ import annotations

import json
import math
import secrets
import shutil
import tempfile
from pathlib import Path

from mlab.confined import Refused, check
from mlab.errors import MlabError
from mlab.failure import FailureMode
from mlab.scoring.outcome import Score
from mlab.scoring.timed_sandbox import copy_files, output_tail, scoring_sandbox

RESULT_MARK = "MLAB-EVALUATOR-RESULT"
RUNNER = "_mlab_run_evaluator.py"

# The runner, a standard-library script beside this module; copied into the scoring folder, as
# the sandbox shows scripts nothing of mlab's installed files.
RUNNER_FILE = Path(__file__).with_name("evaluator_runner.py")


def score_with_evaluator(task, variant_name: str, workspace: Path, private_dir: Path, *,
                         python: str | None = None, device: str | None = None):
    """The Score the task's evaluator gives the submission in workspace."""
    evaluator = task.view.evaluator
    if not evaluator:
        raise MlabError(f"task {task.name}: metric {task.view.metric.name} needs an evaluator, and the task "
                        f"declares none (`evaluator \"<task>/evaluate.py:score\" because \"...\"`)")
    name = f"{evaluator.file}:{evaluator.function}"
    source = (task.root / evaluator.file).resolve()
    if not source.is_file():
        raise MlabError(f"task {task.name}: its evaluator file {source} does not exist")
    submission = task.view.submission.file if task.view.submission else None
    if submission:
        try:
            check(Path(workspace), submission)
        except (FileNotFoundError, NotADirectoryError):
            return Score(None, False, FailureMode.SUBMISSION_FORMAT_ERROR,
                         f"no submission: {submission} was not found in the workspace")
        except Refused as why:
            return Score(None, True, FailureMode.SUBMISSION_FORMAT_ERROR, str(why))
    sandbox = scoring_sandbox(task, variant_name, workspace, private_dir, python=python, device=device)
    scratch = Path(tempfile.mkdtemp(prefix="mlab-evaluator-"))
    try:
        folder = scratch / "scoring"
        for sub in ("submission", "private", "evaluator"):
            (folder / sub).mkdir(parents=True)
        copy_files(Path(workspace), folder / "submission")
        copy_files(Path(private_dir), folder / "private")
        shutil.copyfile(source, folder / "evaluator" / source.name)
        shutil.copyfile(RUNNER_FILE, folder / "evaluator" / RUNNER)
        mark = f"{RESULT_MARK}-{secrets.token_hex(8)}"
        argv = [f"evaluator/{RUNNER}", mark, f"{folder}/evaluator/{source.name}", evaluator.function,
                str(folder / "submission"), str(folder / "private")]
        result = sandbox.run(folder, argv, read_only=(folder / "private", folder / "evaluator"))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return _outcome(task, name, result, mark)


def _outcome(task, name: str, result, mark: str):
    if result.killed_reason:
        return Score(None, True, FailureMode.SUBMISSION_FORMAT_ERROR,
                     f"the submission could not be scored: the evaluator {result.killed_reason}")
    report = None
    for line in reversed((result.output or "").splitlines()):
        if line.startswith(mark + " "):
            try:
                report = json.loads(line[len(mark) + 1:])
            except ValueError:
                report = None
            break
    if report is None:
        raise MlabError(f"task {task.name}: its evaluator {name} ended (exit code {result.exit_code}) without a "
                        f"result; its last output:\n{output_tail(result)}")
    if report.get("status") == "ok" and math.isfinite(report.get("value", math.nan)):
        return Score(float(report["value"]), True)
    if report.get("status") == "invalid" or report.get("type") == "MemoryError":
        return Score(None, True, FailureMode.SUBMISSION_FORMAT_ERROR, str(report.get("message") or "the submission is invalid"))
    raise MlabError(f"task {task.name}: its evaluator {name} failed: {report.get('type')}: {report.get('message')}"
                    + (f"\n{report['traceback'].rstrip()}" if report.get("traceback") else ""))
