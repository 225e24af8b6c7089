"""`mlab prepare`: prepare a task's data into the cache and say where (and, asked, its checksums)."""
from __future__ import annotations

from pathlib import Path

from mlab.cli import args as shared
from mlab.errors import EXIT_OK


def add_arguments(parser) -> None:
    shared.add_task(parser)
    shared.add_data(parser)
    shared.add_build(parser)
    parser.add_argument("--checksums", action="store_true",
                        help="also print a `checksum` declaration for every downloaded (or prepared) file, "
                             "to record in the task")
    parser.add_argument("--agent", action="append", default=[], metavar="NAME",
                        help="also install this external agent's requirements into the agent cache, as its "
                             "first run would (repeatable; the standard external agents included)")
    parser.add_argument("--python", metavar="P",
                        help="with --agent: the run's interpreter, whose version an agent that names no "
                             "Python of its own is keyed by (default: this one)")


def main(args) -> int:
    from mlab.build import resolve_task
    from mlab.data.loaders.remote import REMOTE_SOURCES
    from mlab.data.prepare import checksum_lines, prepare_data

    task = resolve_task(args.task, Path(args.build) if args.build else None)
    prepared = prepare_data(task, args.data)
    state = "already prepared" if prepared.reused else "prepared"
    print(f"{task.name} ({args.data}) {state} in {prepared.folder}")
    for side in ("public", "private"):
        files = sorted(p.relative_to(prepared.folder / side).as_posix()
                       for p in (prepared.folder / side).rglob("*") if p.is_file())
        print(f"  {side}: {', '.join(files) or '(none)'}")
    variant = task.variant(args.data)
    if args.checksums:
        lines, what = checksum_lines(task, args.data, prepared)
        print(f"# SHA-256 of {what}; to record them, paste into the `data {args.data} {{ ... }}` block of "
              f"task {task.name} (in {task.root}):")
        print("\n".join(lines))
    elif variant.checksums:
        print(f"  checksums: {len(variant.checksums)} declared, all verified")
    elif variant.source.kind in REMOTE_SOURCES:
        print(f"  checksums: none declared; `mlab prepare {task.name} --data {args.data} --checksums` prints "
              f"them for the task")
    for name in args.agent:
        install_agent(task, name, args.python, Path(args.build) if args.build else None)
    return EXIT_OK


def install_agent(task, name: str, python: str | None, build: Path | None) -> Path:
    """An external agent's environment, installed into the agent cache as its first run on `task` would
    install it (the same key: its requirements, its Python or the run's, node's major version)."""
    import sys

    from mlab.cli.run import with_std_external
    from mlab.errors import MlabError, UsageError
    from mlab.external.environment import AgentEnvironmentError, prepare_environment
    from mlab.run.agent_python import agent_python
    from mlab.run.node import agent_node

    if name not in task.build.agent_names and build is None:
        task = with_std_external(task)  # as `mlab run --agent NAME` finds the standard external agents
    agent = task.build.agent(name)
    spec = agent.view.external
    if spec is None:
        raise UsageError(f"agent {name} is not an external agent: it has nothing to install")
    node, interpreter = agent_node(agent), agent_python(agent)
    try:
        folder = prepare_environment(name, list(spec.requires),
                                     interpreter.path if interpreter else (python or sys.executable),
                                     say=lambda line: print(line, flush=True), no_deps=list(spec.no_deps),
                                     npm=list(spec.npm), node=node)
    except AgentEnvironmentError as problem:
        print(problem.output[-4000:], file=sys.stderr)   # the installer's own words, for the log
        raise MlabError(f"agent {name} not installed: {problem}") from None
    print(f"agent {name}: environment in {folder}")
    return folder
