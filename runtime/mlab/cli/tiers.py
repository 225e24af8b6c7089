"""The models of a run's tiers (main, fast, edit): chosen from the options and the agent's
declarations, checked before a run folder is made (keys, offline models, the demonstration), and
the model client's retry settings from the environment."""
from __future__ import annotations

import os

from mlab.documents.agent import Agent
from mlab.documents.view import thaw
from mlab.errors import MlabError, UsageError

CLIENT_SETTINGS = {  # environment variable: (ModelClient option, type, default, what is allowed)
    "MLAB_MODEL_TIMEOUT": ("timeout_s", float, 600.0, "a number of seconds above 0"),
    "MLAB_MODEL_BACKOFF": ("backoff_s", float, 1.0, "a number of seconds, 0 or more"),
    "MLAB_MODEL_ATTEMPTS": ("max_attempts", int, 5, "a whole number of at least 1"),
}


TIER_SOURCES = {"option": "given on the command line", "agent": "the agent's declared model",
                "main": "follows the main tier's model"}


def resolve_models(agent: Agent, main: str | None, fast: str | None, edit: str | None,
                   api_base: str | None = None, give: str = "pass --model") -> dict:
    """Per tier: the model, its generation parameters and its source (a TIER_SOURCES key).

    The agent's declared fast and edit models belong with its declared main model: they apply
    only while the main model is that one. Another --model (another provider's, an offline one,
    or any model served at --api-base) also serves the fast and edit tiers not given, so that a
    run needs that model's key and path only.
    """
    from mlab.models.prices import is_offline

    declared = {"main": agent.models.main, "fast": agent.models.fast, "edit": agent.models.edit}
    chosen = {"main": main, "fast": fast, "edit": edit}
    follows_main = main is not None and (main != declared["main"].default or bool(api_base))
    tiers = {}
    for tier in ("main", "fast", "edit"):
        model, source = chosen[tier], "option"
        if model is None and tier != "main" and follows_main:
            model, source = main, "main"
        if model is None:
            model, source = declared[tier].default, "agent"
        if model is None and tier != "main":
            model, source = tiers["main"]["model"], "main"
        if model is None:
            raise UsageError(f"agent {agent.name} declares no default {tier} model; {give}")
        params = {} if is_offline(model) else thaw(declared[tier].params)   # the parameters it declares
        tiers[tier] = {"model": model, "params": params, "source": source}
    return tiers


def client_settings(environ=os.environ) -> dict:
    """The ModelClient's retry settings from the MLAB_MODEL_* environment variables."""
    settings = {}
    for variable, (option, kind, default, allowed) in CLIENT_SETTINGS.items():
        text = environ.get(variable, "").strip()
        if not text:
            settings[option] = default
            continue
        try:
            value = kind(text)
        except ValueError:
            value = None
        fits = {"max_attempts": lambda v: v >= 1, "backoff_s": lambda v: v >= 0}.get(option, lambda v: v > 0)
        if value is None or value != value or not fits(value):  # value != value: NaN
            raise UsageError(f"{variable}={text!r} is not {allowed}")
        settings[option] = value
    return settings


def check_offline_models(models: list[str]) -> None:
    """Refuse an offline model that cannot play (a missing scripted file, a folder without a trace,
    an unknown name) before a run folder is made for it."""
    from mlab.models.errors import ModelError
    from mlab.models.prices import is_offline
    from mlab.models.offline import OfflineModels

    trial = OfflineModels()  # made to try each model, then dropped
    for model in dict.fromkeys(models):
        if is_offline(model):
            try:
                trial.model(model)
            except ModelError as problem:
                raise UsageError(f"--model {model}: {problem}") from None


def _demonstration(task):
    """The task's demonstration (either version), or None when it has none."""
    from mlab.models.demonstration import DemonstrationError, load

    demo = task.view.demo
    if not demo:
        return None
    try:
        return load(task.root / demo)
    except DemonstrationError as problem:
        raise MlabError(f"task {task.name}: {problem}") from None


def check_demonstration(task, agent, models: list[str]) -> None:
    """Where mlab/demo plays, refuse before the run starts a demonstration the agent cannot play."""
    from mlab.models.demonstration import DemonstrationError, check_playable

    if "mlab/demo" not in models:
        return
    demonstration = _demonstration(task)
    if demonstration is None:
        return
    names = [a.name for a in agent.actions.actions]
    try:
        check_playable(demonstration, names, agent.name, str(task.root / task.view.demo))
    except DemonstrationError as problem:
        raise UsageError(f"--model mlab/demo: {problem}") from None


def demonstration_verdict(run, outcome):
    """A demonstration that executes a script nothing provides failed by the task's doing: the
    run is a task error (mlab.data.faults.demonstration_fault), whatever the loop's outcome."""
    import dataclasses

    from mlab.data.faults import demonstration_fault
    from mlab.failure import FailureMode

    demonstration = _demonstration(run.task)
    if demonstration is None or demonstration.replies is not None:
        return outcome
    fault = demonstration_fault(run.task, run.meta["data"]["variant"], demonstration.steps)
    if fault is None:
        return outcome
    return dataclasses.replace(outcome, failure_mode=FailureMode.TASK_ERROR, detail=fault)


def prepare_offline(task, records: list[dict], agent=None):
    """The run's offline models: the task's demonstration loaded with the agent's reply format
    (which mlab/demo renders each step in), and on resume each model moved past the replies
    already used."""
    from mlab.models.offline import OfflineModels

    baseline = task.view.baseline
    offline = OfflineModels(_demonstration(task),
                            baseline.script or "train.py" if baseline.kind == "run" else "train.py",
                            reply_format=agent.view.reply if agent is not None else None,
                            tool_names={a.name: a.tool_name for a in agent.actions.actions if a.tool_name}
                            if agent is not None else None)
    used: dict[tuple[str, str], int] = {}
    for record in records:
        for call in (record.get("model") or {}).get("calls", []):
            key = (call.get("model", ""), call.get("tier", "main"))
            used[key] = used.get(key, 0) + 1
    for (model, tier), count in used.items():
        if model.startswith("mlab/") and model != "mlab/human":
            offline.set_position(model, tier, count)
    return offline


def check_models(args, task, agent, tiers: dict) -> None:
    """Every key the tiers' models need, the offline models' inputs and a tree search's selection,
    checked before a run folder is made."""
    from mlab.cli.keys import check_known_keys, known_provider

    models = {tier: t["model"] for tier, t in tiers.items()}
    if not args.api_base:  # the common providers' keys without importing litellm, then the others'
        check_known_keys(models)
        models = {tier: model for tier, model in models.items() if not known_provider(model)}
    from mlab.models.client import check_keys

    check_keys(models, args.api_base)
    check_offline_models([t["model"] for t in tiers.values()])
    check_demonstration(task, agent, [t["model"] for t in tiers.values()])
    if agent.view.search:
        from mlab.search.engine import selection_problem

        problem = selection_problem(task, agent, args.data or "lite")
        if problem:  # refused before a run folder is made
            raise UsageError(problem)
