"""`mlab list`: the tasks (data variants, hardware, demonstrations), agents and experiments there are."""
from __future__ import annotations

from mlab.errors import EXIT_OK


def main(args) -> int:
    from mlab.build import compile_into_cache, task_sources
    from mlab.sweeps.plan import experiment_names

    build = compile_into_cache(task_sources())
    print("tasks:")
    for name in build.task_names:
        task = build.task(name)
        doc = task.doc
        hardware = doc["hardware"]
        gpus = f"{hardware['gpus']} gpu{'s' if hardware['gpus'] != 1 else ''}" + \
            ("" if not hardware["gpus"] else " (required)" if hardware["gpus_required"] else " (optional)")
        print(f"  {name:<22} {doc['category']:<17} {doc['metric']['name']:<10} data: "
              f"{', '.join(sorted(doc['data'])):<10} {hardware['cpus']} cpu, {gpus}"
              + (f"; requires {', '.join(doc['requires'])}" if doc.get("requires") else "")
              + ("; demonstration (mlab/demo)" if task.view.demo else ""))
    print("agents:")
    for name in build.agent_names:
        doc = build.agent(name).doc
        print(f"  {name:<22} {doc['reply']['format']:<9} shows {len(doc['shown'])} actions; "
              f"main model {doc['models']['main']['default']}")
    # Experiments are found by name, as `mlab sweep` finds them: some (paper-table) live in the
    # standard library, which the tasks' build holds only when a task file uses it.
    experiments = sorted(set(build.manifest["experiments"]) | set(experiment_names()))
    print("experiments:")
    for name in experiments:
        print(f"  {name}")
    return EXIT_OK
