"""`mlab run`: an agent drives a model on a task until it submits, then the
submission is scored into result.json."""
from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path

from mlab.cli import args as shared
from mlab.cli.display import Display
from mlab.cli.tiers import (check_models, check_offline_models, client_settings, demonstration_verdict, prepare_offline,
                            resolve_models)
from mlab.errors import (EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, MlabError, UnknownName, UsageError,
                         closest_hint, plain_failure)
from mlab.failure import FailureMode
from mlab.text import printable


EPILOG = """\
model calls are retried on rate limits, server errors and time-outs; the environment tunes this:
  MLAB_MODEL_TIMEOUT   seconds one call may take before it is abandoned and retried (default 600)
  MLAB_MODEL_BACKOFF   seconds to wait before the first retry, doubled at each retry up to 60 (default 1)
  MLAB_MODEL_ATTEMPTS  attempts per call before the run ends with `model API failure` (default 5)
keyless models: mlab/demo (a labelled demonstration), mlab/scripted:FILE.json, mlab/replay:RUN_DIR, mlab/human
exit codes: 0 scored, 1 the run failed, 2 usage or a missing API key, 3 I/O, 130 interrupted (resumable)"""


def add_arguments(parser) -> None:
    shared.add_task(parser, optional=True)
    parser.add_argument("--agent", metavar="A", help="agent (default: the task's)")
    parser.add_argument("--model", metavar="M", help="main model, e.g. openai/gpt-4o or mlab/demo (default: the agent's)")
    parser.add_argument("--fast-model", metavar="M", help="model for summaries and helper actions "
                        "(default: the agent's with its own main model, else --model)")
    parser.add_argument("--edit-model", metavar="M", help="model for script edits (default: as for --fast-model)")
    parser.add_argument("--api-base", metavar="URL", help="API base for OpenAI-compatible or local servers; "
                        "--model's server then also serves the tiers not named")
    shared.add_data(parser, default=None)
    parser.add_argument("--steps", type=int, metavar="N", help="step limit (overrides the task's)")
    parser.add_argument("--time", metavar="T", help="time limit, e.g. 90s, 30m, 5h")
    parser.add_argument("--tokens", type=int, metavar="N", help="token limit for the run")
    parser.add_argument("--cost", type=float, metavar="USD", help="cost limit for the run, in dollars")
    parser.add_argument("--calls", type=int, metavar="N",
                        help="model-call limit for the run (steps, helper actions, summaries, hooks: every call)")
    parser.add_argument("--script-timeout", metavar="T", help="time limit of each script, e.g. 90s, 5m")
    parser.add_argument("--memory", metavar="SIZE", help="memory limit of each script's process tree, e.g. 8GiB")
    parser.add_argument("--disk", metavar="SIZE",
                        help="most the workspace may hold while a script runs, e.g. 20GiB (the default)")
    shared.add_runs_dir(parser)
    shared.add_build(parser, help="take the task and agent from this build (refused if stale)")
    shared.add_resume(parser)
    shared.add_no_tools(parser)
    parser.add_argument("--reproduce", metavar="RUN", help="run again from RUN's lock.json (its build, models, "
                        "seed, limits and data variant), then print what differs from RUN")
    parser.add_argument("--replay", action="store_true", help="with --reproduce: every tier replays RUN's "
                        "recorded replies (mlab/replay:RUN), so the reproduction is exact")
    parser.add_argument("--seed", type=int, help="replicate number (default 0); passed to the model as a sampling seed")
    shared.add_python(parser, help="interpreter for the agent's scripts")
    parser.add_argument("--device", metavar="D", help="CUDA_VISIBLE_DEVICES for the agent's scripts "
                        "(with --resume: replaces the one the run was started with)")
    shared.add_plain(parser, help="plain log lines even on a terminal")
    shared.add_json(parser, "the result (result.json), last,")
    # last: the dispatcher lays this layout out at the terminal's width, which each add_argument would look up
    parser.epilog, parser.formatter_class = EPILOG, argparse.RawDescriptionHelpFormatter  # the epilog's lines kept


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
    """The run to drive and its loop config: a reproduction, a resumed run or a new one."""
    if getattr(args, "replay", False) and not getattr(args, "reproduce", None):
        raise UsageError("--replay goes with --reproduce RUN (it replays that run's recorded replies)")
    if getattr(args, "reproduce", None):
        from mlab.run.reproduce import open_reproduction

        return _started(*open_reproduction(args))
    if args.resume:
        return _resumed(args)
    if not args.task:
        raise UsageError("name a task (e.g. `mlab run house-price --model mlab/demo`) or give --resume RUN_DIR")
    return _new_run(args)


def _given_with_resume(args) -> list[str]:
    """The options that --resume refuses: a resumed run keeps what it was started with."""
    return [flag for flag, value in (("TASK", args.task), ("--agent", args.agent), ("--model", args.model),
                                     ("--fast-model", args.fast_model), ("--edit-model", args.edit_model),
                                     ("--api-base", args.api_base), ("--build", args.build),
                                     ("--data", args.data), ("--seed", args.seed is not None),
                                     ("--python", args.python), ("--steps", args.steps is not None),
                                     ("--time", args.time), ("--tokens", args.tokens is not None),
                                     ("--cost", args.cost is not None), ("--calls", args.calls is not None),
                                     ("--script-timeout", args.script_timeout),
                                     ("--memory", args.memory), ("--disk", args.disk),
                                     ("--no-tools", getattr(args, "no_tools", False))) if value]


def _resumed(args):
    from mlab.run.folder import Run

    given = _given_with_resume(args)
    if given:
        raise UsageError(f"--resume continues a run with the task, agent, models, data, seed, interpreter "
                         f"and limits it was started with; do not give {', '.join(given)}")
    folder = Path(args.resume)
    if (folder / "result.json").is_file() and not (folder / "result.json").is_symlink():
        raise UsageError(f"{folder} is finished (it has a result.json); start a new run instead")
    config = _read_loop_config(folder)
    check_offline_models([t["model"] for t in config["tiers"].values()])
    from mlab.models.client import import_litellm_for

    import_litellm_for([t["model"] for t in config["tiers"].values()])  # before the run's clock starts again
    return Run.resume(folder, device=args.device), config


def _read_loop_config(folder: Path) -> dict:
    """The loop config (models.json) of a run folder to resume, which must name its tiers' models."""
    from mlab.bounded_json import read_json
    from mlab.run.meta import LOOP_CONFIG

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
    return config


def _new_run(args):
    from mlab.build import resolve_task
    from mlab.limits import limit_overrides
    from mlab.run.folder import Run
    from mlab.run.meta import LOOP_CONFIG

    overrides = limit_overrides(args)  # bad limits, before the build is looked at
    task = resolve_task(args.task, Path(args.build) if args.build else None)
    task, agent = _task_and_agent(args, task)
    no_tools = bool(getattr(args, "no_tools", False))
    reply = agent.view.reply
    if no_tools and reply and reply.format == "tools" and not reply.fallback:
        raise UsageError(f"--no-tools: agent {agent.name} declares no fallback format (respond tools {{ fallback "
                         "... }}), so it cannot run without tools")
    tiers = resolve_models(agent.view, args.model, args.fast_model, args.edit_model, args.api_base)
    check_models(args, task, agent, tiers)
    from mlab.models.client import import_litellm_for

    import_litellm_for([t["model"] for t in tiers.values()])  # before the run's clock starts
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


def _task_and_agent(args, task):
    """The task (joined by the std external agents when --agent names one of them) and the agent."""
    from mlab.build import load_build

    agent_name = args.agent or task.view.agent
    build = load_build(Path(args.build)) if args.build else task.build
    if agent_name not in build.agent_names and not args.build:
        task = with_std_external(task)  # `--agent mini-swe-agent` on any task: std "external" joins the build
        build = task.build
    if agent_name not in build.agent_names:
        raise UnknownName(f"no agent {agent_name!r}{closest_hint(agent_name, build.agent_names)} in the build of "
                          f"{task.name}; agents: {', '.join(build.agent_names)}")
    return task, build.agent(agent_name)


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
    from mlab.models.client import ModelClient, TierConfig

    tiers = config["tiers"]
    client = ModelClient({t: TierConfig(c["model"], c["params"]) for t, c in tiers.items()},
                         api_base=config.get("api_base"), seed=config.get("seed"),
                         offline=prepare_offline(run.task, run.records, run.agent), **settings)
    demo = tiers["main"]["model"] == "mlab/demo"
    outcome = _drive_until_done(run, client, config, Display(run, args.plain, demo))
    if outcome is None or outcome.end_reason == "interrupted":
        print(f"stopped: the run is resumable with `mlab run --resume {run.dir}`", file=sys.stderr)
        return EXIT_INTERRUPTED
    if demo and run.agent.view.kind == "loop":
        outcome = demonstration_verdict(run, outcome)
    result = _score(run, outcome, config, demo)
    if getattr(args, "json", False):  # the result document, last, on stdout (mlab.cli.args.print_json)
        from mlab.cli.args import print_json

        print_json(args, result)
    return EXIT_OK if result["failure_mode"] in (None, FailureMode.SMALL_IMPROVEMENT) else EXIT_FAILED


def _drive_until_done(run, client, config: dict, display):
    """The run driven by its agent's engine (an external agent's command, a tree search or the agent
    loop) until it ends; None when Ctrl-C stopped it at once. A first Ctrl-C stops after the step."""
    from mlab.agent.loop import AgentLoop

    stop = {"asked": False}

    def on_interrupt(signum, frame):
        if stop["asked"]:
            raise KeyboardInterrupt
        stop["asked"] = True
        print("\nstopping after this step (Ctrl-C again to stop at once)", file=sys.stderr, flush=True)

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        if run.agent.view.external:  # an agent from outside mlab: its command in the sandbox
            from mlab.external.runner import ExternalRunner

            return ExternalRunner(run, client, should_stop=lambda: stop["asked"],
                                  on_exchange=display.exchange).run_until_done()
        if run.agent.view.search:  # a tree-search agent runs in the search engine, not the loop
            from mlab.search.engine import SearchEngine

            return SearchEngine(run, client, on_node=display.step, should_stop=lambda: stop["asked"]).run_until_done()
        return AgentLoop(run, client, on_step=display.step, should_stop=lambda: stop["asked"],
                         no_tools=bool(config.get("no_tools"))).run_until_done()
    except KeyboardInterrupt:
        return None
    finally:
        display.close()
        signal.signal(signal.SIGINT, previous)
        run.close()


def _score(run, outcome, config: dict, demo: bool) -> dict:
    """The submission scored into result.json and printed, with what differs from the run it reproduces."""
    print("scoring the submission...", file=sys.stderr, flush=True)
    if run.agent.view.search:
        from mlab.search.engine import write_search_result as write_result
    else:
        from mlab.scoring.result import write_result
    result = score_apart(lambda: write_result(run, outcome, config["tiers"], config, demo), run.dir)
    write_summary(Path(run.dir))
    print_result(run, result)
    if config.get("reproduces"):
        from mlab.run.reproduce import difference_table

        original = Path(config["reproduces"])
        print(printable(difference_table(original, run.dir, rescored_rows(original, run))))
    return result


def write_summary(run_dir: Path) -> None:
    """summary.json for a run just scored (mlab.reports.summary): one that cannot be made costs only
    that, the result stands and reports read the trace, as for runs made before summaries. Written
    here, by the verbs that score (`mlab run`, `mlab drive`), which sit above reports; a run scored
    by the gym environment has none and is read from its trace."""
    from mlab.reports.runs import load_run
    from mlab.reports.summary import record_summary

    try:
        record_summary(load_run(run_dir))
    except (MlabError, OSError, ValueError, TypeError, KeyError, RecursionError) as problem:
        print(f"mlab: no summary.json for {run_dir.name} ({problem}); reports will read its trace", file=sys.stderr)


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
