"""`mlab list`: the tasks (data variants, hardware), agents and experiments there are."""
from __future__ import annotations

from mlab.errors import EXIT_OK


def main(args) -> int:
    from mlab.build import compile_into_cache, task_sources

    build = compile_into_cache(task_sources())
    print("tasks:")
    for name in build.task_names:
        doc = build.task(name).doc
        hardware = doc["hardware"]
        gpus = f"{hardware['gpus']} gpu{'s' if hardware['gpus'] != 1 else ''}" + \
            ("" if not hardware["gpus"] else " (required)" if hardware["gpus_required"] else " (optional)")
        print(f"  {name:<22} {doc['category']:<17} {doc['metric']['name']:<10} data: "
              f"{', '.join(sorted(doc['data'])):<10} {hardware['cpus']} cpu, {gpus}")
    print("agents:")
    for name in build.agent_names:
        doc = build.agent(name).doc
        print(f"  {name:<22} {doc['reply']['format']:<9} shows {len(doc['shown'])} actions; "
              f"main model {doc['models']['main']['default']}")
    experiments = sorted(build.manifest["experiments"])
    print("experiments:")
    for name in experiments:
        print(f"  {name}")
    return EXIT_OK
