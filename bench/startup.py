"""Benchmark: what a user waits for before anything happens — the start of `mlab` and `mlabc`.

Each command runs in a fresh process (the build cache and the parse caches warm, as they are
after a first use), N times; the figure is the median CPU time (user + system) of the child, which
the machine's other load disturbs far less than wall time, with the median wall time beside it:

  python -c pass                 the interpreter's own start, the unit of the ratios
  mlab --help                    target <= 1.5x python -c pass
  mlab list                      target <= 0.6 s
  mlabc check FILE               one task file (default tasks/house-price.mlab, with the std
                                 library it uses); target <= 1.0x the next line
  YAML load of the same task     ruamel.yaml + jsonschema in a fresh process, reading that task's
                                 compiled task.yaml and validating it against spec/task.schema.json

    python bench/startup.py [--runs 10] [--quick]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

YAML_LOAD = """\
import json, sys
from ruamel.yaml import YAML
import jsonschema
document = YAML(typ="safe").load(open(sys.argv[1], encoding="utf-8"))
schema = json.loads(open(sys.argv[2], encoding="utf-8").read())
errors = list(jsonschema.Draft202012Validator(schema).iter_errors(document))
assert not errors, errors[0].message
"""


# An installed package has its byte code compiled; a checkout run with PYTHONDONTWRITEBYTECODE
# would compile every module from source at each start, which no user's start does.
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def measure(command: list[str], runs: int, cwd: Path) -> tuple[float, float]:
    """(median CPU seconds, median wall seconds) of `command` in fresh processes."""
    cpu, wall = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, cwd=cwd, env=ENV)
        wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(cpu), statistics.median(wall)


def task_yaml(task: Path) -> Path:
    """The compiled task.yaml of `task`, from the build cache (compiled there when missing)."""
    from mlab.build import compile_into_cache, source_name

    build = compile_into_cache([task])
    return build.dir / "tasks" / source_name(task) / "task.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--task", default=str(REPO / "tasks" / "house-price.mlab"))
    parser.add_argument("--quick", action="store_true", help="2 runs of each, the figures only indicative")
    args = parser.parse_args()
    runs = 2 if args.quick else args.runs
    python, task = sys.executable, Path(args.task).resolve()
    from mlabc.resources import data_dir

    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)  # no ./tasks here: `mlab list` lists the bundled tasks
        compiled = task_yaml(task)
        commands = {
            "python -c pass": [python, "-c", "pass"],
            "mlab --help": [python, "-m", "mlab.cli", "--help"],
            "mlab list": [python, "-m", "mlab.cli", "list"],
            "mlabc --help": [python, "-m", "mlabc", "--help"],
            f"mlabc check {task.name}": [python, "-m", "mlabc", "check", str(task)],
            f"YAML load of {task.name}'s task.yaml": [python, "-c", YAML_LOAD, str(compiled),
                                                      str(data_dir("spec") / "task.schema.json")],
        }
        for command in commands.values():
            subprocess.run(command, capture_output=True, cwd=cwd, env=ENV)  # fill the caches a first use fills
        figures = {label: measure(command, runs, cwd) for label, command in commands.items()}
    unit = figures["python -c pass"][0]
    print(f"fresh processes, median of {runs} (CPU seconds, wall seconds in brackets):")
    for label, (cpu, wall) in figures.items():
        print(f"  {label:<40} {cpu:6.3f} s  ({wall:.3f} s)  {cpu / unit:5.2f}x python -c pass")
    check, yaml = figures[f"mlabc check {task.name}"][0], figures[f"YAML load of {task.name}'s task.yaml"][0]
    print(f"mlab --help / python -c pass: {figures['mlab --help'][0] / unit:.2f} (target <= 1.5)")
    print(f"mlab list: {figures['mlab list'][0]:.3f} s CPU, {figures['mlab list'][1]:.3f} s wall (target <= 0.6 s)")
    print(f"one-file mlabc check / YAML load of the same task: {check / yaml:.2f} (target <= 1.0)")


if __name__ == "__main__":
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    main()
