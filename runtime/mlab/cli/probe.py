"""`mlab probe TASK --model M`: the model's familiarity with the task (runtime/mlab/audit/familiarity.py)."""
from __future__ import annotations

import json
from pathlib import Path

from mlab.errors import EXIT_OK, MlabError, UsageError


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
    document = {"task": task.name, "task_version": int(task.doc.get("version", 1)), "model": args.model,
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
