"""`mlab audit`: check a task for answer leaks, sandbox confinement, its baseline and prompt (mlab.audit)."""
from __future__ import annotations

from pathlib import Path

from mlab.cli import args as shared
from mlab.errors import EXIT_FAILED, EXIT_OK


def add_arguments(parser) -> None:
    shared.add_task(parser)
    shared.add_data(parser)
    shared.add_build(parser)
    shared.add_python(parser)
    parser.add_argument("--agent", metavar="AGENT", help="audit the prompt as this agent sends it (default: the task's)")


def main(args) -> int:
    from mlab.audit.checks import audit_task
    from mlab.build import resolve_task

    task = resolve_task(args.task, Path(args.build) if args.build else None)
    agent = getattr(args, "agent", None)
    if agent is not None and agent not in task.build.agent_names:
        from mlab.errors import UsageError

        raise UsageError(f"unknown agent {agent!r} for --agent; agents: {', '.join(task.build.agent_names)}")
    report = audit_task(task, args.data, python=args.python, agent=agent)
    for name in report.passed:
        print(f"ok    {name}")
    for note in report.notes:
        print(f"note  {note}")
    for finding in report.findings:
        print(f"FAIL  {finding}")
    verdict = "passes" if report.ok else f"fails ({len(report.findings)} finding{'s' if len(report.findings) != 1 else ''})"
    print(f"audit of {task.name} ({args.data}) {verdict}")
    return EXIT_OK if report.ok else EXIT_FAILED
