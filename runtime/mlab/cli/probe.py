"""`mlab probe TASK --model M`: the model's familiarity with the task (runtime/mlab/audit/familiarity.py)."""
from __future__ import annotations

import json
from pathlib import Path

from mlab.cli import args as shared
from mlab.errors import EXIT_OK, MlabError, UsageError


def add_arguments(parser) -> None:
    shared.add_task(parser)
    shared.add_build(parser)
    parser.add_argument("--model", required=True, metavar="M", help="the model to probe, e.g. openai/gpt-4o")
    parser.add_argument("--prefixes", type=int, default=8, metavar="N", help="prefixes of the task's texts to ask "
                        "for (default 8), each with a shuffled control")
    parser.add_argument("--seed", type=int, default=0, help="seed of the prefixes, controls and bootstrap (default 0)")
    parser.add_argument("-o", "--output", metavar="FILE.json", help="also write the figures, questions and answers "
                        "as JSON (`mlab report` shows probes found in RUNS_DIR/probes/ beside the scores)")
    shared.add_json(parser, "the probe's result")


def main(args) -> int:
    from mlab.audit.familiarity import render, run_probe
    from mlab.build import resolve_task
    from mlab.models.client import ModelClient, TierConfig, check_keys
    from mlab.models.errors import MissingKey
    from mlab.models.errors import ModelError

    if args.prefixes < 0:
        raise UsageError(f"--prefixes {args.prefixes}: give 0 or more")
    task = resolve_task(args.task, Path(args.build) if args.build else None)
    try:
        check_keys({"main": args.model})
    except MissingKey as problem:
        raise UsageError(str(problem)) from None
    client = ModelClient({"main": TierConfig(args.model)}, seed=args.seed, max_attempts=3)
    try:
        figures = run_probe(task, client, args.prefixes, args.seed)
    except ModelError as problem:
        raise MlabError(f"probe of {args.model} on task {task.name}: {problem}") from None
    document = {"task": task.name, "task_version": task.view.version, "model": args.model,
                "seed": args.seed, **figures}
    if args.output:
        try:
            Path(args.output).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        except OSError as problem:
            raise MlabError(f"cannot write {args.output}: {problem.strerror or problem}") from None
    print(render(task.name, args.model, figures))
    if getattr(args, "json", False):
        from mlab.cli.args import print_json

        print_json(args, document)
    return EXIT_OK
