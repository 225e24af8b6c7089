"""`mlab list`: the tasks (data variants, hardware, demonstrations), agents and experiments there are."""
from __future__ import annotations

from mlab.cli import args as shared
from mlab.documents.view import thaw
from mlab.errors import EXIT_OK


def add_arguments(parser) -> None:
    shared.add_json(parser, "the tasks, agents and experiments")


def _listing() -> dict:
    """What `mlab list` shows, as data (the document of `mlab list --json`)."""
    from mlab.build import compile_into_cache, task_sources
    from mlab.sweeps.plan import experiment_names

    build = compile_into_cache(task_sources())
    tasks = []
    for name in build.task_names:
        task = build.task(name)
        view = task.view
        hardware = view.hardware
        tasks.append({"name": name, "category": view.category, "metric": view.metric.name,
                      "data": sorted(view.data), "cpus": hardware.cpus, "gpus": hardware.gpus,
                      "gpus_required": hardware.gpus_required, "requires": list(view.requires),
                      "demonstration": bool(view.demo), "version": view.version,
                      "issues": thaw(view.issues)})
    agents = []
    # `mlab run --agent NAME` takes the standard external agents on any task (they join its build),
    # so they are listed too, after the build's own agents
    std = _std_external()
    sources = [(build, name) for name in build.agent_names] + \
        [(std, name) for name in (std.agent_names if std is not None else []) if name not in build.agent_names]
    for owner, name in sources:
        view = owner.agent(name).view
        search, external = view.search, view.external   # external: an agent from outside mlab, no actions
        # a tree-search agent has no reply format of its own (reply is null): its policy says what it is
        form = "external" if external else view.reply.format if view.reply else f"search {search.policy}"
        agents.append({"name": name, "kind": "linear" if view.kind == "loop" else view.kind, "reply_format": form,
                       "dialect": (external.dialect or "chat") if external else None,
                       "actions_shown": None if search or external else len(view.shown),  # a search calls no actions
                       "nodes_at_once": search.parallel if search else None,
                       "main_model": view.models.main.default})
    # Experiments are found by name, as `mlab sweep` finds them: some (paper-table) live in the
    # standard library, which the tasks' build holds only when a task file uses it.
    experiments = sorted(set(build.manifest["experiments"]) | set(experiment_names()))
    return {"tasks": tasks, "agents": agents, "experiments": experiments}


def _std_external():
    """The build of the standard library's external agents (tasks/std/external.mlab), or None."""
    from mlab.build import compile_into_cache
    from mlabc.resources import std_dir

    source = std_dir() / "external.mlab"
    return compile_into_cache([source]) if source.is_file() else None


def main(args) -> int:
    listing = _listing()
    if getattr(args, "json", False):
        from mlab.cli.args import print_json

        print_json(args, listing)
        return EXIT_OK
    print("tasks:")
    for task in listing["tasks"]:
        gpus = f"{task['gpus']} gpu{'s' if task['gpus'] != 1 else ''}" + \
            ("" if not task["gpus"] else " (required)" if task["gpus_required"] else " (optional)")
        print(f"  {task['name']:<22} {task['category']:<17} {task['metric']:<10} data: "
              f"{', '.join(task['data']) + ';':<11} {task['cpus']} cpu, {gpus}"
              + (f"; requires {', '.join(task['requires'])}" if task["requires"] else "")
              + ("; demonstration (mlab/demo)" if task["demonstration"] else ""))
        for issue in task["issues"]:  # the task's declared known issues, beside it
            state = f"fixed in version {issue['fixed']}" if issue.get("fixed") else "open"
            print(f"    known issue (version {task['version']}; since {issue['since']}, {state}): {issue['text']}")
    print("agents:")
    for agent in listing["agents"]:
        what = f"runs a command in the sandbox, speaks {agent['dialect']}" if agent["kind"] == "external" else \
            f"shows {agent['actions_shown']} actions" if agent["actions_shown"] is not None else \
            f"evaluates {agent['nodes_at_once']} node{'s' if agent['nodes_at_once'] != 1 else ''} at once"
        print(f"  {agent['name']:<22} {agent['reply_format']:<16} {what}; main model {agent['main_model']}")
    print("experiments:")
    for name in listing["experiments"]:
        print(f"  {name}")
    return EXIT_OK
