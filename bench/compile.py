"""Benchmark: compiling .mlab tasks against loading the same declarations as YAML.

Generates N task files (default 1,000) in a temporary folder and, in one run,
times per file:
  ours:     parse + check + lower + JSON-Schema validation of the IR (mlabc)
  baseline: ruamel.yaml loading of the same declaration written as YAML, plus
            jsonschema validation against spec/task.schema.json
Prints the ratio ours/baseline (target <= 1.0), the cold start of `mlabc --help`
(target < 150 ms, median of 10 runs), and what the cached parse tables save: building the
parser in-process and a one-file `mlabc check` in a fresh process, with the tables read from
the user cache ($MLAB_CACHE/mlabc) against built from the grammar (medians of 10).

Then the one-file target: `mlabc check TASK` (default tasks/house-price.mlab, with the std
library files it uses, the caches warm as after a first use) against loading that task's
compiled task.yaml with ruamel.yaml and validating it with jsonschema, each in a fresh process
with byte code compiled as installed. They run in --pairs interleaved pairs (who goes first
alternates), the CPU time (user + system) of each child taken; printed: the median of the
pairs' ratios with their quartiles and range, the two medians, and the load average
(target: the median ratio <= 1.0). That check is `mlabc check --no-data`: the language's cost.

Last, the data model (mlabc.data_model): `mlabc check TASK` against `mlabc check --no-data TASK` for
every bundled task (--quick: house-price alone), fresh processes, each with a fresh user cache
(cold: the variants made and profiled) and again (warm: the models read from the cache, best of
3); printed per task and at most, the seconds the data model adds, CPU (user + system, what a
loaded machine does not inflate) and wall (target: at most 1 s more per task).

A task whose data comes from a generator that takes `sample` is made from a sample of about
mlabc.data_model.build.SAMPLE_ROWS rows a table (docs/authoring.md, "The data model").
--data-only skips the other figures, --data-tasks names the bundled tasks to measure
(--data-tasks generate: every task with a `from generate` variant).

    python bench/compile.py [--files 1000] [--pairs 31] [--task tasks/house-price.mlab] [--quick]
                            [--data-only] [--data-tasks NAME ...]
"""
from __future__ import annotations

import argparse
import io
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ruamel.yaml import YAML

from mlabc.program.check import check_program
from mlabc.program.emit import to_yaml
from mlabc.program.loader import load_program
from mlabc.schemas import problems, stamp, validator

TASK = '''\
# generated task {i}
task bench-{i} {{
  title     "Generated task number {i}"
  category  classic-kaggle
  problem   """
    Predict the column y of table.csv from the other columns.
    Write submission.csv with the columns id and y; scored by mean absolute error.
    This is variant {i} of a generated benchmark task.
    """
  starter   "env"
  read_only ["train.csv", "test.csv"]
  requires  ["pandas", "scikit-learn"]
  data lite {{
    from    csv "table.csv"
    split   random 0.2 seed {i}
    id      "id"
    answers ["y"]
    public  ["train.csv", "test.csv"]
    private ["answers.csv"]
    limits  {{ steps 20  time 20m  script_timeout 5m }}
  }}
  submission "submission.csv" columns ["id", "y"]
  metric     mae on "y" lower_is_better
  baseline   run "train.py"
  success    improvement >= 10%
  limits     {{ steps 50  time 5h  script_timeout 30m  memory 8GiB }}
  hardware   {{ cpus 2  gpus 0  memory 8GiB }}
}}
'''


def make_corpus(folder: Path, count: int) -> tuple[list[Path], list[str]]:
    (folder / "env").mkdir()
    (folder / "env" / "train.py").write_text("print('hi')\n")
    (folder / "table.csv").write_text("id,x,y\n1,2,3\n")
    files, yaml_texts = [], []
    for i in range(count):
        path = folder / f"bench-{i}.mlab"
        path.write_text(TASK.format(i=i))
        files.append(path)
    # The YAML form of the same declarations: the compiled IR written as YAML.
    compiled = check_program(load_program(files))
    assert compiled.ok, compiled.diagnostics[:3]
    for name, (ir, _) in sorted(compiled.tasks.items(), key=lambda kv: int(kv[0].split("-")[1])):
        yaml_texts.append(to_yaml(stamp("task", dict(ir, root=str(folder)))))
    return files, yaml_texts


def time_ours(files: list[Path]) -> float:
    start = time.perf_counter()
    for path in files:
        compiled = check_program(load_program([path]))
        for name, (ir, _) in compiled.tasks.items():
            assert not problems("task", stamp("task", dict(ir, root=str(path.parent))))
    return time.perf_counter() - start


def time_yaml(texts: list[str]) -> float:
    yaml = YAML()
    check = validator("task")
    start = time.perf_counter()
    for text in texts:
        document = yaml.load(io.StringIO(text))
        errors = list(check.iter_errors(document))
        assert not errors, errors[0].message
    return time.perf_counter() - start


RUNS = 10  # fresh processes per median (2 with --quick)


def cold_start_ms() -> float:
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "mlabc", "--help"], check=True, capture_output=True)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def parser_build_ms(cached: bool, runs: int | None = None) -> float:
    """Building the LALR parser in a fresh process, its import excluded."""
    code = ("import time; from mlabc.parser import mlab_parser; t = time.perf_counter(); "
            f"mlab_parser(cached={cached}); print((time.perf_counter() - t) * 1000)")
    return statistics.median(float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                                  text=True, env=os.environ).stdout) for _ in range(runs or RUNS))


def one_file_check_ms(path: Path) -> float:
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "mlabc", "check", "--no-data", str(path)], check=True, capture_output=True)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def cache_figures(folder: Path, path: Path) -> None:
    """The parser's start-up and a one-file check, parse tables cached against built each time."""
    saved = os.environ.get("MLAB_CACHE")
    blocker = folder / "not-a-folder"  # the cache folder cannot be made under a file: no cache
    blocker.write_text("")
    figures = {}
    try:
        for label, cache in (("uncached", blocker / "cache"), ("cached", folder / "cache")):
            os.environ["MLAB_CACHE"] = str(cache)
            parser_build_ms(True, runs=1)  # fills the cache when there can be one
            figures[label] = (parser_build_ms(True), one_file_check_ms(path))
    finally:
        if saved is None:
            os.environ.pop("MLAB_CACHE", None)
        else:
            os.environ["MLAB_CACHE"] = saved
    (build_u, check_u), (build_c, check_c) = figures["uncached"], figures["cached"]
    print(f"parser start-up: {build_u:.1f} ms uncached, {build_c:.1f} ms cached (ratio {build_u / build_c:.1f}x)")
    print(f"one-file `mlabc check`: {check_u:.0f} ms uncached, {check_c:.0f} ms cached "
          f"(ratio {check_u / check_c:.2f}x)")


def _child_cpu(command: list[str], cwd: Path) -> float:
    """CPU seconds (user + system) of `command` run to its end in a fresh process."""
    import resource

    from startup import ENV

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, capture_output=True, cwd=cwd, env=ENV)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def check_against_yaml(task: Path, pairs: int) -> None:
    """The one-file target: `mlabc check TASK` / the YAML load of its task.yaml, in interleaved pairs."""
    from startup import YAML_LOAD, task_yaml

    from mlabc.resources import data_dir

    compiled = task_yaml(task)
    check = [sys.executable, "-m", "mlabc", "check", "--no-data", str(task)]
    load = [sys.executable, "-c", YAML_LOAD, str(compiled), str(data_dir("spec") / "task.schema.json")]
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        _child_cpu(check, cwd), _child_cpu(load, cwd)  # the caches a first use fills
        checks, loads = [], []
        for pair in range(pairs):
            if pair % 2:
                loads.append(_child_cpu(load, cwd))
                checks.append(_child_cpu(check, cwd))
            else:
                checks.append(_child_cpu(check, cwd))
                loads.append(_child_cpu(load, cwd))
    ratios = sorted(c / y for c, y in zip(checks, loads))
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    print(f"one-file `mlabc check --no-data {task.name}` / YAML load of its task.yaml, {pairs} interleaved pairs of fresh "
          f"processes (CPU): median {statistics.median(ratios):.2f} (quartiles {quartiles[0]:.2f} to "
          f"{quartiles[2]:.2f}, range {ratios[0]:.2f} to {ratios[-1]:.2f}; target <= 1.0)")
    print(f"  check {statistics.median(checks) * 1000:.0f} ms, YAML load {statistics.median(loads) * 1000:.0f} ms "
          f"(medians of the CPU times); load average {os.getloadavg()[0]:.1f}")


def _times(command: list[str], env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of `command` run to its end in a fresh process."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def data_model_figures(tasks: list[Path]) -> None:
    """Seconds `mlabc check` spends on the data model per task, cold and warm (see the docstring)."""
    from startup import ENV

    worst_cold = worst_warm = 0.0
    for task in tasks:
        with tempfile.TemporaryDirectory() as cache:
            env = {**ENV, "MLAB_CACHE": cache}
            without = [sys.executable, "-m", "mlabc", "check", "--no-data", str(task)]
            with_model = [sys.executable, "-m", "mlabc", "check", str(task)]
            _times(without, env)  # the parse caches, which both share
            cold_with, cold_without = _times(with_model, env), _times(without, env)
            warm_with = [min(runs) for runs in zip(*(_times(with_model, env) for _ in range(RUNS)))]
            warm_without = [min(runs) for runs in zip(*(_times(without, env) for _ in range(RUNS)))]
        cold = [a - b for a, b in zip(cold_with, cold_without)]
        warm = [a - b for a, b in zip(warm_with, warm_without)]
        worst_cold, worst_warm = max(worst_cold, cold[1]), max(worst_warm, warm[1])
        print(f"data model of {task.stem}: {cold[1]:+.2f} s CPU cold (variants made; {cold[0]:+.2f} s wall), "
              f"{warm[1]:+.2f} s CPU warm (read from the cache; {warm[0]:+.2f} s wall); ratio with/without "
              f"(CPU): {cold_with[1] / cold_without[1]:.2f} cold, {warm_with[1] / warm_without[1]:.2f} warm")
    print(f"data model: at most {worst_cold:+.2f} s CPU a task cold, {worst_warm:+.2f} s warm "
          f"(target: at most 1 s more per task); load average {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=31, help="interleaved pairs of the one-file check and the "
                                                              "YAML load (default 31)")
    parser.add_argument("--task", default=str(Path(__file__).resolve().parent.parent / "tasks" / "house-price.mlab"))
    parser.add_argument("--quick", action="store_true", help="20 files and 2 samples of each start: checks the benchmark runs")
    parser.add_argument("--data-only", action="store_true", help="only the data model's figures")
    parser.add_argument("--data-tasks", nargs="+", metavar="NAME",
                        help="the bundled tasks whose data model is measured (default: all; `generate`: those "
                             "with a generator)")
    args = parser.parse_args()
    global RUNS
    if args.quick:
        args.files, RUNS, args.pairs = 20, 2, 2
    bundled = Path(__file__).resolve().parent.parent / "tasks"
    tasks = [bundled / "house-price.mlab"] if args.quick else sorted(bundled.glob("*.mlab"))
    if args.data_tasks == ["generate"]:
        tasks = [t for t in tasks if re.search(r"\bfrom\s+generate\b", t.read_text(encoding="utf-8"))]
    elif args.data_tasks:
        tasks = [bundled / f"{name}.mlab" for name in args.data_tasks]
    if args.data_only:
        data_model_figures(tasks)
        return
    with tempfile.TemporaryDirectory() as tmp:
        files, texts = make_corpus(Path(tmp), args.files)
        time_ours(files[:20]), time_yaml(texts[:20])  # warm caches (parser tables, validators)
        ours = time_ours(files)
        baseline = time_yaml(texts)
        cache_figures(Path(tmp), files[0])
    n = args.files
    print(f"files: {n}")
    print(f"mlabc parse+check+lower+validate: {ours / n * 1000:.2f} ms/file")
    print(f"ruamel.yaml load + jsonschema:    {baseline / n * 1000:.2f} ms/file")
    print(f"ratio ours/yaml: {ours / baseline:.2f} (target <= 1.0)")
    print(f"cold start of `mlabc --help`: {cold_start_ms():.0f} ms (target < 150 ms)")
    check_against_yaml(Path(args.task).resolve(), args.pairs)
    data_model_figures(tasks)


if __name__ == "__main__":
    main()
