"""The verifier of an exported Harbor task: mlab's scorer on the agent's workspace, into reward.json.

Run by the export's tests/test.sh inside the verifier image (`python -m mlab.export.harbor_verify`),
where --home holds what the export put there: task.json (the compiled task), export.json (the data
variant and the baseline), private/ (the answers), starter/ (timed metrics) and root/ (the task's
evaluator). It writes into --logs:

    reward.json   {"success": 1 | 0, "score": S, "improvement": I}   (Harbor's rewards: numbers only,
                  so score and improvement are left out when the submission has none)
    result.json   mlab's result core: metric, direction, score, baseline, improvement, threshold,
                  success, failure_mode, detail

A submission that cannot be scored is the agent's failure: reward success 0, exit code 0. A task
that cannot be scored (unreadable answers, a broken evaluator or starter) is not: no reward, exit 1.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from mlab.errors import MlabError
from mlab.standard_json import json_text


def exported_task(home: Path):
    """The TaskBuild of an exported task (task.json), its task folder being home/root."""
    from mlab.build import Build, TaskBuild
    from mlab.documents.task import Task

    doc = json.loads((home / "task.json").read_text(encoding="utf-8"))
    doc["root"] = str(home / "root")
    build = Build(dir=home, manifest={"tasks": {}, "agents": {}, "experiments": {}}, digest="exported")
    view = Task.of(doc)
    return TaskBuild(view.name, view, build, doc)


def _without_read_only(task, workspace: Path, scratch: Path) -> Path:
    """A copy of the workspace without the files the task keeps read-only: a timed metric's scoring
    then uses the starter's originals, as a run of mlab, which refuses every change to them, would."""
    from mlab.actions.workspace import Workspace
    from mlab.scoring.timed_sandbox import fresh_copy

    copy = fresh_copy(workspace, scratch / "workspace")
    for path in Workspace(copy, task.view.read_only).read_only_files():
        path.unlink()
    return copy


def verify(home: Path, workspace: Path) -> dict:
    """mlab's result core for the submission in workspace (raises MlabError for a task's own fault)."""
    from mlab.failure import FailureMode
    from mlab.scoring.score import score_workspace
    from mlab.scoring.evaluate import judged
    from mlab.scoring.outcome import Score
    from mlab.scoring.timed import score_timed

    task = exported_task(home)
    export = json.loads((home / "export.json").read_text(encoding="utf-8"))
    variant, view = export["variant"], task.view
    private = home / "private"
    if not workspace.is_dir():
        outcome = Score(None, False, FailureMode.SUBMISSION_FORMAT_ERROR, f"no workspace: {workspace} does not exist")
    else:
        scratch = Path(tempfile.mkdtemp(prefix="mlab-verify-"))
        try:
            if view.metric.kind == "tabular":  # reads one file, through the confined reader
                outcome = score_workspace(task, variant, workspace, private)
            else:
                # Scripts run on a copy in a scratch folder: the scoring sandbox hides the workspace's
                # parent, which for /workspace would be the whole file system.
                copy = _without_read_only(task, workspace, scratch)
                outcome = score_timed(task, variant, copy, private, starter=home / "starter") if view.metric.timed \
                    else score_workspace(task, variant, copy, private)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    baseline = outcome.baseline or export.get("baseline") or {"value": None}
    result = judged(view, outcome, baseline)
    result["failure_mode"] = str(result["failure_mode"]) if result["failure_mode"] else None
    return {"task": task.name, "variant": variant, **result}


def reward(result: dict) -> dict:
    """Harbor's reward.json: numbers only."""
    rewards = {"success": 1 if result["success"] else 0}
    for key in ("score", "improvement"):
        if result[key] is not None:
            rewards[key] = float(result[key])
    return rewards


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mlab.export.harbor_verify",
                                     description="score an exported mlab task's workspace into reward.json")
    parser.add_argument("--home", required=True, type=Path, help="the export's verifier folder (task.json, ...)")
    parser.add_argument("--workspace", required=True, type=Path, help="the agent's workspace")
    parser.add_argument("--logs", required=True, type=Path, help="where reward.json and result.json go")
    args = parser.parse_args(argv)
    try:
        result = verify(args.home, args.workspace)
    except MlabError as problem:
        print(f"mlab: the task could not be scored: {problem}", file=sys.stderr)
        return 1
    args.logs.mkdir(parents=True, exist_ok=True)
    (args.logs / "result.json").write_text(json_text(result), encoding="utf-8")  # standard JSON, whatever was submitted
    (args.logs / "reward.json").write_text(json_text(reward(result), indent=None), encoding="utf-8")
    shown = "no score" if result["score"] is None else f"{result['metric']} {result['score']:.6g}"
    gain = "" if result["improvement"] is None else f", improvement {result['improvement']:.1%}"
    print(f"{result['task']}: {shown}{gain}, success {result['success']}"
          + (f" ({result['failure_mode']}: {result['detail']})" if result["failure_mode"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
