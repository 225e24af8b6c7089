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


def exported_task(home: Path):
    """The TaskBuild of an exported task (task.json), its task folder being home/root."""
    from mlab.build import Build, TaskBuild

    doc = json.loads((home / "task.json").read_text(encoding="utf-8"))
    doc["root"] = str(home / "root")
    build = Build(dir=home, manifest={"tasks": {}, "agents": {}, "experiments": {}}, digest="exported")
    return TaskBuild(doc["name"], doc, build)


def _without_read_only(task, workspace: Path, scratch: Path) -> Path:
    """A copy of the workspace without the files the task keeps read-only: a timed metric's scoring
    then uses the starter's originals, as a run of mlab, which refuses every change to them, would."""
    from mlab.actions.workspace import Workspace
    from mlab.scoring import fresh_copy

    copy = fresh_copy(workspace, scratch / "workspace")
    for path in Workspace(copy, task.view.read_only).read_only_files():
        path.unlink()
    return copy


def verify(home: Path, workspace: Path) -> dict:
    """mlab's result core for the submission in workspace (raises MlabError for a task's own fault)."""
    from mlab.failure import FailureMode
    from mlab.scoring import score_workspace
    from mlab.scoring.evaluate import metric_display
    from mlab.scoring.metrics import improvement, is_success, timed_rounds_succeed
    from mlab.scoring.timed import score_timed

    task = exported_task(home)
    export = json.loads((home / "export.json").read_text(encoding="utf-8"))
    variant, view = export["variant"], task.view
    private = home / "private"
    if not workspace.is_dir():
        score = None
        failure, detail = FailureMode.SUBMISSION_FORMAT_ERROR, f"no workspace: {workspace} does not exist"
        baseline = export.get("baseline")
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
        score, failure, detail = outcome.value, outcome.failure_mode, outcome.detail
        baseline = outcome.baseline or export.get("baseline")
    threshold = view.success_threshold
    gain = None
    if score is not None and baseline and baseline.get("value") is not None:
        gain = improvement(score, baseline["value"], view.metric.direction)
    success = gain is not None and is_success(gain, threshold) \
        and timed_rounds_succeed((baseline or {}).get("paired_speedups"), threshold)
    if failure is None and not success and gain is not None:
        failure, detail = FailureMode.SMALL_IMPROVEMENT, f"improvement {gain:.1%} is below the threshold"
    return {"task": task.name, "variant": variant, "metric": view.metric.name, **metric_display(view.metric),
            "direction": view.metric.direction, "score": score, "baseline": baseline, "improvement": gain,
            "threshold": threshold, "success": bool(success),
            "failure_mode": str(failure) if failure else None, "detail": detail}


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
    (args.logs / "result.json").write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    (args.logs / "reward.json").write_text(json.dumps(reward(result)) + "\n", encoding="utf-8")
    shown = "no score" if result["score"] is None else f"{result['metric']} {result['score']:.6g}"
    gain = "" if result["improvement"] is None else f", improvement {result['improvement']:.1%}"
    print(f"{result['task']}: {shown}{gain}, success {result['success']}"
          + (f" ({result['failure_mode']}: {result['detail']})" if result["failure_mode"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
