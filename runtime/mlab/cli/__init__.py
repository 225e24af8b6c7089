"""`mlab`: the runtime's command line; one module per verb, imported only when it runs.

Exit codes (mlab.errors): 0 ok, 1 the run (or a check, a build, the data) failed, 2 usage (bad
arguments, an unknown task, agent or experiment, a missing API key), 3 I/O (a file that cannot be
read or written), 130 interrupted.
Heavy libraries (pandas, scikit-learn, litellm) are imported only by the commands that need them.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys

from mlab.cli import args as shared
from mlab.errors import EXIT_INTERRUPTED, EXIT_IO, EXIT_OK, MlabError
from mlab.text import NOTED, printable

__all__ = ["COMMANDS", "main"]

# verb → the module under mlab.cli whose main(args) does it
COMMANDS = {"prepare": "prepare", "drive": "drive", "run": "run", "list": "list", "eval": "eval",
            "report": "report", "view": "view", "sweep": "sweep", "baseline": "baseline", "audit": "audit",
            "checkout": "checkout", "export": "export",
            "export-task": "export_task", "lock": "lock", "probe": "probe"}

RUN_EPILOG = """\
model calls are retried on rate limits, server errors and time-outs; the environment tunes this:
  MLAB_MODEL_TIMEOUT   seconds one call may take before it is abandoned and retried (default 600)
  MLAB_MODEL_BACKOFF   seconds to wait before the first retry, doubled at each retry up to 60 (default 1)
  MLAB_MODEL_ATTEMPTS  attempts per call before the run ends with `model API failure` (default 5)
keyless models: mlab/demo (a labelled demonstration), mlab/scripted:FILE.json, mlab/replay:RUN_DIR, mlab/human
exit codes: 0 scored, 1 the run failed, 2 usage or a missing API key, 3 I/O, 130 interrupted (resumable)"""


EVERY_VERB = "*"


def _at_width(layout: type[argparse.HelpFormatter]) -> type[argparse.HelpFormatter]:
    """A help layout (argparse's formatter class) at the terminal's width, found without importing
    shutil, which argparse imports for it in every parser: a little less for `mlab` to start."""

    class AtWidth(layout):
        def __init__(self, prog, **kwargs):
            kwargs.setdefault("width", _columns() - 2)
            super().__init__(prog, **kwargs)

    return AtWidth


_Formatter = _at_width(argparse.HelpFormatter)
_LAYOUTS = {argparse.HelpFormatter: _Formatter}


def _columns() -> int:
    """The terminal's width as shutil.get_terminal_size() gives it: $COLUMNS, the terminal, 80."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


class _Unbuilt:
    """The parser of a verb the command line does not name: the list of verbs shows it, but its
    arguments are never read, so they are not built (each command starts by building only its own)."""

    def add_argument(self, *args, **kwargs):
        return self

    def add_argument_group(self, *args, **kwargs):
        return self

    def add_mutually_exclusive_group(self, *args, **kwargs):
        return self

    def set_defaults(self, **kwargs) -> None:
        pass


class _Verbs:
    """argparse's subparsers, building the arguments of the named verb only."""

    def __init__(self, subparsers, wanted: str | None):
        self._subparsers, self._wanted = subparsers, wanted

    def add_parser(self, name: str, **kwargs):
        layout = kwargs.get("formatter_class", argparse.HelpFormatter)
        if layout not in _LAYOUTS:
            _LAYOUTS[layout] = _at_width(layout)
        kwargs["formatter_class"] = _LAYOUTS[layout]
        parser = self._subparsers.add_parser(name, **kwargs)
        return parser if self._wanted in (name, EVERY_VERB) else _Unbuilt()


def _named_verb(argv: list[str] | None) -> str | None:
    """The verb the command line names (its first word that is not an option), if it is one."""
    words = [word for word in (sys.argv[1:] if argv is None else argv) if not word.startswith("-")]
    return words[0] if words and words[0] in COMMANDS else None


def build_parser(wanted: str | None = EVERY_VERB) -> argparse.ArgumentParser:
    """The command line's parser; `wanted` names the one verb whose arguments are built (None: no
    verb's, as for `mlab --help`; EVERY_VERB: all of them)."""
    parser = argparse.ArgumentParser(
        prog="mlab", description="The mlab runtime: runs compiled mlab tasks and agents.",
        epilog="exit codes: 0 ok, 1 failed (a run, a check, a build), 2 usage (bad arguments, unknown "
               "names, a missing key), 3 I/O, 130 interrupted", formatter_class=_Formatter)
    parser.add_argument("--version", action="store_true", help="print the runtime version")
    verbs = _Verbs(parser.add_subparsers(dest="verb", metavar="COMMAND"), wanted)

    prepare = verbs.add_parser("prepare", help="prepare a task's data into the cache and say where")
    shared.add_task(prepare)
    shared.add_data(prepare)
    shared.add_build(prepare)
    prepare.add_argument("--checksums", action="store_true",
                         help="also print a `checksum` declaration for every downloaded (or prepared) file, "
                              "to record in the task")
    prepare.add_argument("--agent", action="append", default=[], metavar="NAME",
                         help="also install this external agent's requirements into the agent cache, as its "
                              "first run would (repeatable; the standard external agents included)")
    prepare.add_argument("--python", metavar="P",
                         help="with --agent: the run's interpreter, whose version an agent that names no "
                              "Python of its own is keyed by (default: this one)")

    drive = verbs.add_parser("drive", help="run a JSON list of actions through a run (scripted driver)")
    shared.add_task(drive, optional=True)
    drive.add_argument("--actions", required=True, metavar="FILE.json",
                       help='JSON list of {"action": NAME, "input": {...}}, or a task\'s demo.json')
    drive.add_argument("--agent", metavar="A", help="agent whose action table is used (default: the task's)")
    shared.add_data(drive)
    shared.add_runs_dir(drive)
    shared.add_resume(drive)
    drive.add_argument("--steps", type=int, metavar="N", help="step limit (overrides the task's)")
    drive.add_argument("--time", metavar="T", help="time limit, e.g. 90s, 30m, 5h (overrides the task's)")
    shared.add_build(drive)
    shared.add_python(drive)
    drive.add_argument("--device", metavar="D", help="CUDA_VISIBLE_DEVICES for scripts")
    drive.add_argument("--seed", type=int, default=0, help="the run's seed (default 0)")
    drive.add_argument("--quiet", action="store_true", help="print only the summary, not each observation")
    shared.add_json(drive, "the result (result.json, labelled \"driven\": true), last,")

    _add_run(verbs)
    listing = verbs.add_parser("list", help="list the tasks (data variants, hardware), agents and experiments")
    shared.add_json(listing, "the tasks, agents and experiments")
    _add_reading(verbs)
    _add_sweep(verbs)
    _add_checks(verbs)

    checkout = verbs.add_parser("checkout", help="restore the workspace of a step of a run, or of a node of a "
                                "tree search, into a folder")
    checkout.add_argument("run", metavar="RUN", help="run folder (runs/<run-id>)")
    checkout.add_argument("--step", type=int, metavar="N", help="step (0: as prepared; default: the final "
                          "workspace, for a tree search the submitted node's)")
    checkout.add_argument("--node", type=int, metavar="N", help="node N of a tree search")
    checkout.add_argument("dir", metavar="DIR", help="empty or new folder to write the files into")

    export = verbs.add_parser("export", help="write runs in another tool's format: ATIF trajectories, Inspect "
                              "logs, an MLE-bench grading report")
    export.add_argument("runs", nargs="+", metavar="RUN", help="run folders (inspect, mle-bench: or folders "
                        "holding runs)")
    export.add_argument("--to", required=True, choices=("atif", "inspect", "mle-bench"), help="the format to "
                        "write (mle-bench: medals of the runs of tasks that declare thresholds or a leaderboard "
                        "file, the others skipped with the reason)")
    export.add_argument("-o", "--output", metavar="FILE", help="the new file (atif and mle-bench default: "
                        "stdout; inspect: FILE.eval for one task, agent and model, else a new folder of .eval logs)")
    _add_export_task(verbs)
    return parser


def _add_export_task(verbs) -> None:
    exporting = verbs.add_parser("export-task", help="write tasks as another runner's task folders: Harbor")
    exporting.add_argument("tasks", nargs="+", metavar="TASK", help=shared.TASK_HELP)
    exporting.add_argument("--to", required=True, choices=("harbor",), help="the format to write")
    exporting.add_argument("-o", "--output", required=True, metavar="DIR", help="a new or empty folder, one task folder each")
    shared.add_data(exporting)
    shared.add_build(exporting)
    exporting.add_argument("--wheel", metavar="FILE.whl", help="the mlab-harness wheel the verifier installs "
                           "(default: built from this checkout with pip wheel . --no-deps, or for an installed copy "
                           "packed from its installed files)")
    exporting.add_argument("--base-image", metavar="IMAGE", help="the Python base image of both environments, e.g. "
                           "pinned by digest (default: python:<this Python's version>-slim-bookworm)")


def _add_run(verbs) -> None:
    run = verbs.add_parser(
        "run", help="run an agent on a task until it submits, then score it",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=RUN_EPILOG)
    shared.add_task(run, optional=True)
    run.add_argument("--agent", metavar="A", help="agent (default: the task's)")
    run.add_argument("--model", metavar="M", help="main model, e.g. openai/gpt-4o or mlab/demo (default: the agent's)")
    run.add_argument("--fast-model", metavar="M", help="model for summaries and helper actions "
                     "(default: the agent's with its own main model, else --model)")
    run.add_argument("--edit-model", metavar="M", help="model for script edits (default: as for --fast-model)")
    run.add_argument("--api-base", metavar="URL", help="API base for OpenAI-compatible or local servers; "
                     "--model's server then also serves the tiers not named")
    shared.add_data(run, default=None)
    run.add_argument("--steps", type=int, metavar="N", help="step limit (overrides the task's)")
    run.add_argument("--time", metavar="T", help="time limit, e.g. 90s, 30m, 5h")
    run.add_argument("--tokens", type=int, metavar="N", help="token limit for the run")
    run.add_argument("--cost", type=float, metavar="USD", help="cost limit for the run, in dollars")
    run.add_argument("--calls", type=int, metavar="N",
                     help="model-call limit for the run (steps, helper actions, summaries, hooks: every call)")
    run.add_argument("--script-timeout", metavar="T", help="time limit of each script, e.g. 90s, 5m")
    run.add_argument("--memory", metavar="SIZE", help="memory limit of each script's process tree, e.g. 8GiB")
    run.add_argument("--disk", metavar="SIZE",
                     help="most the workspace may hold while a script runs, e.g. 20GiB (the default)")
    shared.add_runs_dir(run)
    shared.add_build(run, help="take the task and agent from this build (refused if stale)")
    shared.add_resume(run)
    shared.add_no_tools(run)
    run.add_argument("--reproduce", metavar="RUN", help="run again from RUN's lock.json (its build, models, seed, "
                     "limits and data variant), then print what differs from RUN")
    run.add_argument("--replay", action="store_true", help="with --reproduce: every tier replays RUN's recorded "
                     "replies (mlab/replay:RUN), so the reproduction is exact")
    run.add_argument("--seed", type=int, help="replicate number (default 0); passed to the model as a sampling seed")
    shared.add_python(run, help="interpreter for the agent's scripts")
    run.add_argument("--device", metavar="D", help="CUDA_VISIBLE_DEVICES for the agent's scripts "
                     "(with --resume: replaces the one the run was started with)")
    shared.add_plain(run, help="plain log lines even on a terminal")
    shared.add_json(run, "the result (result.json), last,")


def _add_reading(verbs) -> None:
    """eval, report and view: what researchers read after runs."""
    evaluate = verbs.add_parser("eval", help="score runs: one row per run (final and best score, usage, failures)")
    evaluate.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run folders, or folders holding runs")
    evaluate.add_argument("--intermediate", action="store_true",
                          help="also score every step's snapshot (written to RUN_DIR/scores.jsonl)")
    evaluate.add_argument("--at", action="append", metavar="KIND=B,...",
                          help="score at budgets: what each run would have submitted by then, e.g. time=1h,2h,4h, "
                               "tokens=100k,1M, 'cost=$1,$5' (quoted: the shell expands $1) or a share of the run's limit "
                               "(time=25%%,50%%); "
                               "several kinds in one option (time=1h,tokens=1M) or repeated; cached in "
                               "RUN_DIR/budgets.json")
    evaluate.add_argument("-o", "--output", metavar="FILE.csv",
                          help="write every column of the rows as CSV: scores, usage, cost and cost_known, the "
                               "normalised score, gap closed and medal from the task's reference points, per-dollar "
                               "figures and any score_at_* budget scores")
    shared.add_json(evaluate, "the rows, every column,")

    report = verbs.add_parser("report", help="tables and plots over a folder of runs (Markdown, CSV, LaTeX, PNG)",
                              description="Tables and plots over a folder of runs: success and improvement per task "
                                          "and over tasks, efficiency, compute, failures, paired comparisons; the "
                                          "normalised score, gap closed, medals and AUP where tasks declare reference "
                                          "points; the cost-score frontier with score per dollar (an unpriced model's "
                                          "cost is 'unknown price', never $0). See docs/reports.md.")
    report.add_argument("runs_dir", metavar="RUNS_DIR", help="folder holding run folders")
    report.add_argument("-o", "--output", metavar="DIR", help="where the report goes (default RUNS_DIR/report)")
    report.add_argument("--compare", metavar="F:A,F:B[,F:C...]",
                        help="paired comparison, e.g. agent:research,agent:react or model:A,model:B; with more "
                             "sides the first is compared with each other one")
    report.add_argument("--seed", type=int, default=0, help="seed of the bootstrap intervals (default 0)")
    report.add_argument("--by-version", action="store_true", help="report runs of one task made on different "
                        "task versions (or data) side by side, instead of refusing to pool them")

    view = verbs.add_parser("view", help="a self-contained HTML page of a run, or an index of a folder of runs")
    view.add_argument("path", metavar="RUN_DIR|RUNS_DIR", help="one run folder, or a folder holding runs")
    view.add_argument("-o", "--output", metavar="FILE",
                      help="the HTML file (default RUN_DIR/view.html, or RUNS_DIR/index.html)")


def _add_sweep(verbs) -> None:
    sweep = verbs.add_parser("sweep", help="run an experiment: tasks × agents × models × seeds, then report")
    sweep.add_argument("experiment", metavar="EXPERIMENT",
                       help="experiment name (from ./tasks or the bundled tasks), a .mlab file (FILE.mlab or "
                            "FILE.mlab:NAME) or build/experiments/<name>.yaml")
    sweep.add_argument("--executor", choices=("local", "ray"), default="local",
                       help="local: worker processes here (default); ray: Ray tasks on a cluster")
    sweep.add_argument("--workers", type=int, metavar="K",
                       help="runs at once (local default: CPUs / the CPUs a task declares; ray: as the cluster fits)")
    sweep.add_argument("--devices", metavar="0,1,...",
                       help="GPUs to hand out to runs of tasks that declare GPUs, one run per device (local)")
    sweep.add_argument("--address", metavar="ADDR",
                       help="Ray cluster to join ('auto': the one this machine belongs to); default: start one here")
    sweep.add_argument("--runs-dir", default="runs", metavar="DIR",
                       help="the sweep's folder is DIR/<experiment>/ (default runs/)")
    sweep.add_argument("--plan", action="store_true",
                       help="print the runs, their resources and an estimate of model calls; run nothing")
    sweep.add_argument("--cost", type=float, metavar="USD",
                       help="a cost limit for the whole sweep, in dollars: no run starts once the runs have spent "
                            "it, and each run started gets the budget left as its own cost limit; refused when a "
                            "model of the runs has no price")
    sweep.add_argument("--tasks", metavar="T,...", help="only the runs of these tasks (with --plan or to run)")
    sweep.add_argument("--agents", metavar="A,...", help="only the runs of these agents (with --plan or to run)")
    shared.add_json(sweep, "the plan (with --plan)")
    sweep.add_argument("--retry-failed", action="store_true",
                       help="give runs that used up their retries another round of attempts")
    sweep.add_argument("--no-report", action="store_true",
                       help="write only the run table, not the report (make it later with `mlab report DIR/runs`)")
    shared.add_plain(sweep, help="plain progress lines even on a terminal")


def _add_checks(verbs) -> None:
    """baseline and audit: checks of a task."""
    baseline = verbs.add_parser("baseline", help="run a task's starter in the sandbox and report (or record) its score")
    shared.add_task(baseline)
    shared.add_data(baseline)
    shared.add_build(baseline)
    baseline.add_argument("--record", action="store_true",
                          help="write the score with its provenance into the task's baselines.json")
    shared.add_python(baseline, help="interpreter for the starter (default: this one)")

    lock = verbs.add_parser("lock", help="check whether this checkout would reproduce a run (its lock.json)")
    lock.add_argument("run", metavar="RUN", help="run folder (runs/<run-id>)")
    lock.add_argument("--check", action="store_true", required=True,
                      help="compare the lock's digests and versions with this checkout's (exit 1 when any differ)")

    probe = verbs.add_parser("probe", help="how familiar a model is with a task: its canary and prefixes of its "
                             "texts, against shuffled controls")
    shared.add_task(probe)
    shared.add_build(probe)
    probe.add_argument("--model", required=True, metavar="M", help="the model to probe, e.g. openai/gpt-4o")
    probe.add_argument("--prefixes", type=int, default=8, metavar="N", help="prefixes of the task's texts to ask "
                       "for (default 8), each with a shuffled control")
    probe.add_argument("--seed", type=int, default=0, help="seed of the prefixes, controls and bootstrap (default 0)")
    probe.add_argument("-o", "--output", metavar="FILE.json", help="also write the figures, questions and answers "
                       "as JSON (`mlab report` shows probes found in RUNS_DIR/probes/ beside the scores)")
    shared.add_json(probe, "the probe's result")

    audit = verbs.add_parser("audit", help="check a task: no answer leaks, sandbox confinement, baseline, prompt")
    shared.add_task(audit)
    shared.add_data(audit)
    shared.add_build(audit)
    shared.add_python(audit)
    audit.add_argument("--agent", metavar="AGENT", help="audit the prompt as this agent sends it (default: the task's)")


def main(argv: list[str] | None = None) -> int:
    from mlabc.cli_start import parse_command

    from mlab import __version__

    args = parse_command(build_parser(_named_verb(argv)), argv, "mlab", __version__)
    if isinstance(args, int):
        return args
    NOTED.clear()   # each command says its notes about a run folder's files once (mlab.text.note_once)
    try:
        verb = importlib.import_module(f"mlab.cli.{COMMANDS[args.verb]}")
        if getattr(args, "json", False):
            # --json: stdout carries the one JSON document (shared.print_json); the rest goes to stderr.
            args.json_stdout = sys.stdout
            with contextlib.redirect_stdout(sys.stderr):
                return verb.main(args)
        return verb.main(args)
    except MlabError as problem:
        print(f"mlab: {printable(problem)}", file=sys.stderr)   # a message may quote what an agent made
        return problem.exit_code
    except BrokenPipeError:
        return EXIT_OK
    except OSError as problem:
        print(printable(f"mlab: {problem.strerror or problem}: {problem.filename or ''}".rstrip(": ")), file=sys.stderr)
        return EXIT_IO
    except KeyboardInterrupt:
        print("mlab: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
