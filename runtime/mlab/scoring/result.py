"""Assemble a run's result.json (validated against spec/result.schema.json)."""
from __future__ import annotations

import platform
import time
from pathlib import Path

from mlab import __version__
from mlab.documents.agent import Agent
from mlab.errors import MlabError
from mlab.limits import counted_steps
from mlab.standard_json import write_json

RESULT = "result.json"
RESULT_VERSION = 5  # 5: failure mode 'agent install failed', compute's accelerator_devices; 4: sandbox, agent_kind, task_version, compute's hours and accelerator; 3: reply_format, search; 2: tier sources


def _litellm_version() -> str | None:
    try:
        from importlib.metadata import PackageNotFoundError, version

        return version("litellm")
    except PackageNotFoundError:
        return None


def reply_format(run) -> dict | None:
    """The agent's declared reply format, the one its steps ran in (a tool agent's fallback once
    it fell back) and why it fell back; None for an agent without a reply format (tree search)."""
    declared = run.agent.view.reply.format if run.agent.view.reply else None
    if declared is None:
        return None
    ran, reason = declared, None
    for record in run.records:
        model = record.get("model") or {}
        if model.get("fallback_reason") and reason is None:
            reason = model["fallback_reason"]
        if model.get("format"):
            ran = model["format"]
    return {"declared": declared, "ran": ran, "reason": reason}


def sandbox_record(run) -> dict:
    """Whether the run's scripts ran in the sandbox: counted from the steps' compute records, with
    the reason the sandbox can (or cannot) be used here."""
    from mlab.sandbox.runner import sandbox_available

    computes = [record["compute"] for record in run.records if isinstance(record.get("compute"), dict)]
    unsandboxed = sum(1 for compute in computes if compute.get("sandboxed") is False)
    usable, reason = sandbox_available()
    return {"sandboxed": unsandboxed == 0 and (bool(computes) or usable), "scripts": len(computes),
            "unsandboxed_scripts": unsandboxed, "reason": reason}


def unsandboxed_note(result: dict | None) -> str | None:
    """The words that say a run's scripts ran without the sandbox (from result.json's `sandbox`),
    or None when they ran in it or the result predates the record."""
    sandbox = (result or {}).get("sandbox")
    if not isinstance(sandbox, dict) or sandbox.get("sandboxed") is not False:
        return None
    scripts, bare = sandbox.get("scripts") or 0, sandbox.get("unsandboxed_scripts") or 0
    what = f"{bare} of its {scripts} script(s) ran without the sandbox" if bare else "the sandbox could not be used"
    reason = f" ({sandbox['reason']})" if sandbox.get("reason") else ""
    return (f"NOT SANDBOXED: {what}{reason}; they could read every file this user can, the answers included, "
            "and use the network")


def agent_kind(agent: Agent) -> str:
    """linear, search (a tree-search policy) or external (a command from outside mlab)."""
    return "linear" if agent.kind == "loop" else agent.kind


def compute_used(run) -> dict:
    """The scripts' compute (count, wall and CPU seconds, peak memory) with CPU-hours, and the
    accelerator busy seconds sampled during the scripts (in all and per device): null, with the
    reason in `accelerator_note`, where not measured."""
    from mlab.run.hardware import accelerator_use

    totals = run.compute_totals()
    computes = [record["compute"] for record in run.records if isinstance(record.get("compute"), dict)]
    totals.update(cpu_hours=round(totals["cpu_s"] / 3600.0, 6),
                  **accelerator_use(computes, run.meta.get("hardware")))
    return totals


def write_result(run, outcome, tiers: dict, config: dict, demo: bool, driven: bool = False,
                 extra: dict | None = None) -> dict:
    """Score the run's final workspace and write result.json; `extra` adds fields of the run's kind
    (a tree search's summary), checked against the schema with the rest."""
    from mlabc.schemas import problems

    from mlab.scoring.evaluate import evaluate
    from mlab.models.usage import Usage

    started = time.monotonic()
    scored = evaluate(run, outcome.failure_mode, outcome.detail)
    scoring_s = time.monotonic() - started
    usage = Usage.from_records(run.records)
    last = run.records[-1] if run.records else {}
    result = {
        "schema": "https://mlab.dev/spec/result.schema.json", "schema_version": RESULT_VERSION,
        "run_id": run.id, "task": run.task.name, "agent": run.agent.name, "agent_kind": agent_kind(run.agent.view),
        "data_variant": run.meta["data"]["variant"], "seed": run.meta["seed"], "demo": demo,
        "end_reason": run.end_reason or outcome.end_reason, **scored,
        "steps": counted_steps(run.records, run.limits.steps),  # not the wind-down after the step limit
        "wall_time_s": round(float(last.get("elapsed_s", 0.0)), 3), "scoring_s": round(scoring_s, 3),
        "tokens": usage.tokens, "total_tokens": usage.total_tokens, "cost": usage.cost,
        "model_calls": usage.calls, "compute": compute_used(run), "sandbox": sandbox_record(run),
        "task_version": int(run.meta.get("task_version", 1)),
        "models": {tier: {**config, "source": config.get("source", "unknown")} for tier, config in tiers.items()},
        "provenance": {"mlab_version": __version__, "compiler_version": run.meta["compiler_version"],
                       "build_digest": run.meta["build"]["digest"], "litellm_version": _litellm_version(),
                       "python": platform.python_version(), "api_base": config.get("api_base")},
    }
    if driven:  # `mlab drive`: the actions came from a file, no model chose them
        result["driven"] = True
    else:
        result["reply_format"] = reply_format(run)
    result.update(extra or {})
    found = problems("result", result)
    if found:
        raise MlabError("internal error: the result does not match spec/result.schema.json: " + "; ".join(found))
    path = Path(run.dir) / RESULT
    write_json(path, result)  # standard JSON: a provider's NaN or an agent's lone surrogate as documented strings
    return result
