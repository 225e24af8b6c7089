"""`mlab run`: an agent drives a model on a task until it submits, then the
submission is scored into result.json."""
from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

from mlab.cli.display import Display
from mlab.errors import (EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, MlabError, UnknownName, UsageError,
                         closest_hint, plain_failure)
from mlab.text import printable
from mlab.failure import FailureMode

CLIENT_SETTINGS = {  # environment variable: (ModelClient option, type, default, what is allowed)
    "MLAB_MODEL_TIMEOUT": ("timeout_s", float, 600.0, "a number of seconds above 0"),
    "MLAB_MODEL_BACKOFF": ("backoff_s", float, 1.0, "a number of seconds, 0 or more"),
    "MLAB_MODEL_ATTEMPTS": ("max_attempts", int, 5, "a whole number of at least 1"),
}


# -- models ------------------------------------------------------------------------------

TIER_SOURCES = {"option": "given on the command line", "agent": "the agent's declared model",
                "main": "follows the main tier's model"}


def resolve_models(agent_doc: dict, main: str | None, fast: str | None, edit: str | None,
                   api_base: str | None = None, give: str = "pass --model") -> dict:
    """Per tier: the model, its generation parameters and its source (a TIER_SOURCES key).

    The agent's declared fast and edit models belong with its declared main model: they apply
    only while the main model is that one. Another --model (another provider's, an offline one,
    or any model served at --api-base) also serves the fast and edit tiers not given, so that a
    run needs that model's key and path only.
    """
    from mlab.models.prices import is_offline

    declared = agent_doc["models"]
    chosen = {"main": main, "fast": fast, "edit": edit}
    follows_main = main is not None and (main != declared["main"]["default"] or bool(api_base))
    tiers = {}
    for tier in ("main", "fast", "edit"):
        model, source = chosen[tier], "option"
        if model is None and tier != "main" and follows_main:
            model, source = main, "main"
        if model is None:
            model, source = declared[tier]["default"], "agent"
        if model is None and tier != "main":
            model, source = tiers["main"]["model"], "main"
        if model is None:
            raise UsageError(f"agent {agent_doc['name']} declares no default {tier} model; {give}")
        params = {} if is_offline(model) else dict(declared[tier]["params"])
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


def _check_offline_models(models: list[str]) -> None:
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


def _check_demonstration(task, agent, models: list[str]) -> None:
    """Where mlab/demo plays, refuse before the run starts a demonstration the agent cannot play."""
    from mlab.models.demonstration import DemonstrationError, check_playable

    if "mlab/demo" not in models:
        return
    demonstration = _demonstration(task)
    if demonstration is None:
        return
    names = [a["name"] for a in agent.actions["actions"]]
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


def _prepare_offline(task, records: list[dict], agent=None):
    """The run's offline models: the task's demonstration loaded with the agent's reply format
    (which mlab/demo renders each step in), and on resume each model moved past the replies
    already used."""
    from mlab.models.offline import OfflineModels

    baseline = task.view.baseline
    offline = OfflineModels(_demonstration(task),
                            baseline.get("script", "train.py") if baseline["kind"] == "run" else "train.py",
                            reply_format=agent.view.reply if agent is not None else None,
                            tool_names={a["name"]: a["tool_name"] for a in agent.actions["actions"] if a.get("tool_name")}
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


# -- run -----------------------------------------------------------------------------------


def with_std_external(task):
    """The task compiled together with the standard library's external agents (tasks/std/external.mlab)."""
    from mlab.build import compile_into_cache
    from mlabc.resources import std_dir

    source = Path(task.build.manifest["tasks"][task.name]["source"])
    external = std_dir() / "external.mlab"
    if not external.is_file() or not source.is_file():
        return task
    return compile_into_cache([source, external]).task(task.name)


def _started(run, config):
    """A new run's reproduction lock (lock.json); models.json was written inside the folder."""
    from mlab.run.lock import write_lock

    write_lock(run, config)
    return run, config


def _open_run(args):
    from mlab.build import load_build, resolve_task
    from mlab.limits import limit_overrides
    from mlab.run.folder import LOOP_CONFIG, Run

    if getattr(args, "replay", False) and not getattr(args, "reproduce", None):
        raise UsageError("--replay goes with --reproduce RUN (it replays that run's recorded replies)")
    if getattr(args, "reproduce", None):
        from mlab.run.reproduce import open_reproduction

        return _started(*open_reproduction(args))
    if args.resume:
        given = [flag for flag, value in (("TASK", args.task), ("--agent", args.agent), ("--model", args.model),
                                          ("--fast-model", args.fast_model), ("--edit-model", args.edit_model),
                                          ("--api-base", args.api_base), ("--build", args.build),
                                          ("--data", args.data), ("--seed", args.seed is not None),
                                          ("--python", args.python), ("--steps", args.steps is not None),
                                          ("--time", args.time), ("--tokens", args.tokens is not None),
                                          ("--cost", args.cost is not None), ("--calls", args.calls is not None),
                                          ("--script-timeout", args.script_timeout),
                                          ("--memory", args.memory), ("--disk", args.disk),
                                          ("--no-tools", getattr(args, "no_tools", False))) if value]
        if given:
            raise UsageError(f"--resume continues a run with the task, agent, models, data, seed, interpreter "
                             f"and limits it was started with; do not give {', '.join(given)}")
        folder = Path(args.resume)
        if (folder / "result.json").is_file() and not (folder / "result.json").is_symlink():
            raise UsageError(f"{folder} is finished (it has a result.json); start a new run instead")
        from mlab.bounded_json import read_json

        try:
            config = read_json(folder / LOOP_CONFIG)  # a run folder is hostile data: bounded, never a pipe
            if not isinstance(config.get("tiers"), dict) or not all(
                    isinstance(t, dict) and isinstance(t.get("model"), str) for t in config["tiers"].values()):
                raise MlabError(f"{folder / LOOP_CONFIG} names no models (its \"tiers\" are missing or not "
                                "objects with a \"model\")")
        except FileNotFoundError:
            if not folder.is_dir():
                raise UsageError(f"--resume {folder}: no such run folder") from None
            trace = folder / "trace.jsonl"
            if not trace.is_file() or trace.stat().st_size == 0:
                # a folder of an older mlab killed while it was being made: it holds no step to continue
                raise MlabError(f"{folder} is not a complete run (no {LOOP_CONFIG} and no step taken: it was "
                                "stopped while being made); start a new run instead") from None
            raise MlabError(f"{folder} was not started by `mlab run` (no {LOOP_CONFIG}); "
                            "continue it with `mlab drive --resume`") from None
        except (OSError, ValueError) as problem:
            raise MlabError(f"cannot read {folder / LOOP_CONFIG}: {problem}") from None
        _check_offline_models([t["model"] for t in config["tiers"].values()])
        from mlab.models.client import import_litellm

        import_litellm()  # before the run's clock starts again
        return Run.resume(folder, device=args.device), config
    if not args.task:
        raise UsageError("name a task (e.g. `mlab run house-price --model mlab/demo`) or give --resume RUN_DIR")
    from mlab.cli.keys import check_known_keys, known_provider

    overrides = limit_overrides(args)  # bad limits, before the build is looked at
    task = resolve_task(args.task, Path(args.build) if args.build else None)
    agent_name = args.agent or task.view.agent
    build = load_build(Path(args.build)) if args.build else task.build
    if agent_name not in build.agent_names and not args.build:
        task = with_std_external(task)  # `--agent mini-swe-agent` on any task: std "external" joins the build
        build = task.build
    if agent_name not in build.agent_names:
        raise UnknownName(f"no agent {agent_name!r}{closest_hint(agent_name, build.agent_names)} in the build of "
                          f"{task.name}; agents: {', '.join(build.agent_names)}")
    agent = build.agent(agent_name)
    no_tools = bool(getattr(args, "no_tools", False))
    if no_tools and agent.doc["reply"] and agent.doc["reply"].get("format") == "tools" \
            and not agent.doc["reply"].get("fallback"):
        raise UsageError(f"--no-tools: agent {agent.name} declares no fallback format (respond tools {{ fallback "
                         "... }}), so it cannot run without tools")
    tiers = resolve_models(agent.doc, args.model, args.fast_model, args.edit_model, args.api_base)
    models = {tier: t["model"] for tier, t in tiers.items()}
    if not args.api_base:  # the common providers' keys without importing litellm, then the others'
        check_known_keys(models)
        models = {tier: model for tier, model in models.items() if not known_provider(model)}
    from mlab.models.client import check_keys, import_litellm

    check_keys(models, args.api_base)
    _check_offline_models([t["model"] for t in tiers.values()])
    _check_demonstration(task, agent, [t["model"] for t in tiers.values()])
    if agent.doc.get("search"):
        from mlab.search.engine import selection_problem

        problem = selection_problem(task, agent, args.data or "lite")
        if problem:  # refused before a run folder is made
            raise UsageError(problem)
    import_litellm()  # before the run's clock starts: a slow import is not the agent's time
    seed = 0 if args.seed is None else args.seed
    config = {"tiers": tiers, "api_base": args.api_base, "seed": seed}
    if no_tools:
        config["no_tools"] = True
    # models.json is written with the folder, which appears whole: a creation killed half way
    # leaves no run that `--resume` would take for a driven one
    run = Run.create(task, agent, Path(args.runs_dir), data=args.data or "lite", seed=seed,
                     limits=overrides, python=args.python, device=args.device,
                     extra={LOOP_CONFIG: config})
    return _started(run, config)


def main(args) -> int:
    from mlab.models.errors import MissingKey

    # Usage errors (a missing key, a bad option or limit) are found before the agent loop, pandas
    # or litellm are imported: those come after _open_run.
    settings = client_settings()
    try:
        run, config = _open_run(args)
    except MissingKey as problem:
        print(f"mlab: {problem}", file=sys.stderr)
        return EXIT_USAGE
    from mlab.agent.loop import AgentLoop
    from mlab.models.client import ModelClient, TierConfig
    from mlab.scoring.result import write_result

    tiers = config["tiers"]
    client = ModelClient({t: TierConfig(c["model"], c["params"]) for t, c in tiers.items()},
                         api_base=config.get("api_base"), seed=config.get("seed"),
                         offline=_prepare_offline(run.task, run.records, run.agent), **settings)
    demo = tiers["main"]["model"] == "mlab/demo"
    stop = {"asked": False}

    def on_interrupt(signum, frame):
        if stop["asked"]:
            raise KeyboardInterrupt
        stop["asked"] = True
        print("\nstopping after this step (Ctrl-C again to stop at once)", file=sys.stderr, flush=True)

    previous = signal.signal(signal.SIGINT, on_interrupt)
    display = Display(run, args.plain, demo)
    search = run.agent.doc.get("search")  # a tree-search agent runs in the search engine, not the loop
    try:
        if run.agent.doc.get("external"):  # an agent from outside mlab: its command in the sandbox
            from mlab.external.runner import ExternalRunner

            outcome = ExternalRunner(run, client, should_stop=lambda: stop["asked"],
                                     on_exchange=display.exchange).run_until_done()
        elif search:
            from mlab.search.engine import SearchEngine

            outcome = SearchEngine(run, client, on_node=display.step, should_stop=lambda: stop["asked"]).run_until_done()
        else:
            outcome = AgentLoop(run, client, on_step=display.step, should_stop=lambda: stop["asked"],
                                no_tools=bool(config.get("no_tools"))).run_until_done()
    except KeyboardInterrupt:
        outcome = None
    finally:
        display.close()
        signal.signal(signal.SIGINT, previous)
        run.close()
    if outcome is None or outcome.end_reason == "interrupted":
        print(f"stopped: the run is resumable with `mlab run --resume {run.dir}`", file=sys.stderr)
        return EXIT_INTERRUPTED
    if demo and not search and not run.agent.doc.get("external"):
        outcome = demonstration_verdict(run, outcome)
    print("scoring the submission...", file=sys.stderr, flush=True)
    if search:
        from mlab.search.engine import write_search_result as write_result
    result = score_apart(lambda: write_result(run, outcome, tiers, config, demo), run.dir)
    print_result(run, result)
    if config.get("reproduces"):
        from mlab.run.reproduce import difference_table

        original = Path(config["reproduces"])
        print(printable(difference_table(original, run.dir, rescored_rows(original, run))))
    if getattr(args, "json", False):  # the result document, last, on stdout (mlab.cli.args.print_json)
        from mlab.cli.args import print_json

        print_json(args, result)
    return EXIT_OK if result["failure_mode"] in (None, FailureMode.SMALL_IMPROVEMENT) else EXIT_FAILED


def rescored_rows(original: Path, run) -> list[tuple[str, str, str]]:
    """A row when the score the original's result.json records is not what this harness gets for
    the original's final workspace (scored by the task as this checkout compiles it, else as the
    reproduction ran it, against the reproduction's own answers): a forged result.json is never
    taken over the recomputed score."""
    import math
    import tempfile

    from mlab.bounded_json import read_json
    from mlab.run.checkout import checkout
    from mlab.run.lock import read_lock, recompiled
    from mlab.scoring.score import score_workspace

    what = "score in result.json (original) / rescored"
    try:
        recorded = read_json(original / "result.json", schema="result").get("score")
        lock = read_lock(original)
    except (MlabError, OSError) as problem:
        return [("original result.json", "not read", printable(str(problem).splitlines()[0]))]
    build = recompiled(lock)
    task = build.task(lock["task"]) if not isinstance(build, str) and lock["task"] in build.task_names else run.task
    with tempfile.TemporaryDirectory(prefix="mlab-rescore-") as scratch:
        try:
            checkout(original, None, Path(scratch) / "workspace")
            score = score_workspace(task, lock["data"]["variant"], Path(scratch) / "workspace", run.private_dir).value
        except (MlabError, OSError) as problem:
            return [(what, str(recorded), f"cannot be rescored: {str(problem).splitlines()[0]}")]
    same = (recorded is None and score is None) or (
        isinstance(recorded, (int, float)) and score is not None and math.isclose(recorded, score, rel_tol=1e-9,
                                                                                  abs_tol=1e-12))
    return [] if same else [(what, str(recorded), str(score))]


def score_apart(score, run_dir: Path) -> dict:
    """Score in a forked child, so pandas and the submission's data never enlarge the harness.

    The child writes result.json and exits; its exit status carries only success. Where fork
    is not available, scoring happens in this process.
    """
    import os
    import traceback

    if not hasattr(os, "fork"):
        return score()
    sys.stdout.flush()
    sys.stderr.flush()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        status = 0
        try:
            score()
        except MlabError as problem:
            print(f"mlab: {printable(problem)}", file=sys.stderr)
            status = 3
        except BaseException:
            traceback.print_exc()
            status = 4
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    if code == 3:
        raise MlabError(f"the run in {run_dir} could not be scored (see above)")
    if code != 0:
        raise MlabError(f"scoring the run in {run_dir} failed (exit {code}, see above); the run's trace "
                        "and workspace are complete")
    from mlab.scoring.result import RESULT

    return json.loads((run_dir / RESULT).read_text(encoding="utf-8"))


def print_result(run, result: dict) -> None:
    label = "DEMONSTRATION by the keyless demo model — not an agent result\n" if result["demo"] else ""
    score = "none" if result["score"] is None else f"{result['score']:.6g}"
    base = result["baseline"].get("value")
    base = "none" if base is None else f"{base:.6g}"
    gain = "n/a" if result["improvement"] is None else f"{result['improvement']:+.1%}"
    verdict = "success" if result["success"] else f"no success ({result['failure_mode'] or 'below threshold'})"
    cost = "unknown" if result["cost"] is None else f"${result['cost']:.4f}"
    print(f"{label}run: {run.dir}\n{result['metric']}: {score} (baseline {base}, improvement {gain}, "
          f"threshold {result['threshold']:.0%}) -> {verdict}\nsteps {result['steps']}, "
          f"{result['wall_time_s']:.1f}s agent + {result['scoring_s']:.1f}s scoring, "
          f"{result['total_tokens']:,} tokens, cost {cost}")
    from mlab.scoring.result import RESULT, unsandboxed_note

    if unsandboxed_note(result):
        print(printable(unsandboxed_note(result)))
    if result.get("detail"):
        # plainly (a provider's wrapped exception text stays in result.json); it may quote the agent's files
        print(f"detail: {printable(plain_failure(result['detail']))}")
    print(f"result: {Path(run.dir) / RESULT}\nnext: mlab view {run.dir}  (writes {Path(run.dir) / 'view.html'}, "
          f"the run step by step)")
