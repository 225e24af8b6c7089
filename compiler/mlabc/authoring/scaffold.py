"""`mlabc new task NAME [--from TASK]`: the files of a new task, which pass `mlabc check` as made.

A new task gets DIR/NAME.mlab, a starter folder DIR/NAME/env with a runnable train.py, a small
generated table for the lite data (with the script that made it), a solution folder and the
steps of a demonstration for the keyless demo model, and the demo.json built from them
(`mlabc new demo`, demo_builder.py). Comments in every file say what to replace. `--from TASK` copies an
existing task instead: its declaration (renamed, its paths moved to the new folder, its comments
kept) and its folder.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, fields, is_dataclass, replace
from pathlib import Path

from .. import ast as A
from ..comments import CommentMap, source_comments
from ..diagnostics import DiagnosticError
from .demo_builder import build_demonstration
from .fmt import format_text
from ..program.loader import SUFFIX, YAML_SUFFIX
from .printer import print_module

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(-[A-Za-z0-9_]+)*")


class ScaffoldError(Exception):
    """A problem the user can fix (bad name, files in the way, no such task)."""


@dataclass
class Scaffolded:
    mlab: Path
    files: list[Path]


# ---- the starter task ---------------------------------------------------------

TASK_TEMPLATE = '''# {name}: TODO say in one line what this task asks for and where its data comes from.
# Made by `mlabc new task {name}`. Fill in every TODO, then run `mlabc check {mlab}`.
use std "agents"

task {name} {{
  title     "TODO: what to predict, in one line"
  category  canonical  # canonical, classic-kaggle, recent-kaggle, research or code-improvement
  problem   """
    TODO: the research problem in your own words, as the agent will read it.

    train.csv holds one row per example: the id, the features x1, x2 and x3, and the target y.
    test.csv holds other rows without y. Start from train.py, which fits a linear model and
    prints its validation error. Improve on it, then write submission.csv with one row for
    every row of test.csv and the columns id and y. Predictions are scored by their mean
    absolute error (lower is better).
    """
  starter   "{name}/env"  # copied into every run's workspace
  read_only ["train.csv", "test.csv"]
  requires  ["pandas", "scikit-learn"]

  # The lite variant runs offline in minutes. TODO: replace the generated table with a small
  # sample of the real data (see {name}/lite/make_lite.py), and add `data full {{ ... }}`.
  data lite {{
    from    csv "{name}/lite/data.csv"
    split   random 0.2 seed 42
    id      "id"
    answers ["y"]
    public  ["train.csv", "test.csv"]
    private ["answers.csv"]
    limits  {{ steps 20  time 20m  script_timeout 5m }}
  }}

  submission "submission.csv" columns ["id", "y"]
  metric     mae on "y" lower_is_better  # spec/metrics.json lists the metrics
  baseline   run "train.py"              # or a number: baseline 0.5 because "..."
  success    improvement >= 10%
  agent      research
  limits     {{ steps 50  time 5h  script_timeout 30m  memory 8GiB }}
  hardware   {{ cpus 1  gpus 0  memory 4GiB }}
  demo       "{name}/demo.json"  # the steps the keyless demo model plays
}}
'''

TRAIN_PY = '''"""Starter script of the task {name}: a deliberately simple baseline.

Reads train.csv (with the target y) and test.csv (without it) from the current folder,
measures a linear model on a held-out part of train.csv, then refits on all of train.csv
and writes submission.csv (id,y). TODO: adapt it to your data; keep it short and plain,
it is where the agent starts.
"""

import pandas as pd
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mean_absolute_error
from sklearn.model_selection import train_test_split

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
features = ["x1", "x2", "x3"]

X_fit, X_val, y_fit, y_val = train_test_split(train[features], train["y"], test_size=0.25, random_state=1)
model = LinearRegression().fit(X_fit, y_fit)
print(f"Validation MAE: {{mean_absolute_error(y_val, model.predict(X_val)):.4f}}")

model.fit(train[features], train["y"])
submission = pd.DataFrame({{"id": test["id"], "y": model.predict(test[features])}})
submission.to_csv("submission.csv", index=False)
print(f"Wrote submission.csv with {{len(submission)}} rows")
'''

MAKE_LITE_PY = '''"""Makes lite/data.csv of the task {name}: a placeholder table of {rows} generated rows.

TODO: replace it with a script that takes a small, fixed sample of the real data, so the lite
variant runs offline; say where the data comes from and under which licence.
Run it from anywhere: python make_lite.py
"""

import csv
import random
from pathlib import Path


def rows(count: int = {rows}, seed: int = 7):
    """id, x1, x2, x3 and a target y with a non-linear part a linear model misses."""
    rng = random.Random(seed)
    for number in range(1, count + 1):
        x1, x2, x3 = rng.uniform(-2, 2), rng.uniform(-2, 2), rng.uniform(0, 3)
        y = 3 * x1 - 2 * x2 + x3 * x3 + rng.gauss(0, 0.3)
        yield [number, round(x1, 4), round(x2, 4), round(x3, 4), round(y, 4)]


def write(path: Path) -> None:
    with path.open("w", newline="") as out:
        table = csv.writer(out)
        table.writerow(["id", "x1", "x2", "x3", "y"])
        table.writerows(rows())


if __name__ == "__main__":
    write(Path(__file__).resolve().parent / "data.csv")
'''


DEMO_STEPS = """\
# The steps of {name}'s demonstration, which `mlabc new demo {name}/solution --steps {name}/demo-steps.txt`
# turns into demo.json (run it again after changing them or the solution). One action a line, its
# input after the name, and after ` -- ` the thought the step states. `Write File NAME` writes the
# file NAME of the solution folder.
List Files . -- See what the workspace holds.
Execute Script train.py -- Run the starter script to measure the baseline.
Write File train.py -- TODO: put the winning solution in solution/train.py; this writes it.
Execute Script train.py -- Train the solution and write submission.csv.
Validate Submission -- Check the submission's format before finishing.
Final Answer Ran the solution's train.py, which wrote submission.csv.
"""


def new_task(name: str, folder: Path, template: str | None = None) -> Scaffolded:
    """Create task `name` in `folder` (a fresh starter, or a copy of the task `template`)."""
    if not NAME.fullmatch(name):
        raise ScaffoldError(f"{name!r} cannot name a task: use letters, digits, `_` and `-`, "
                            "starting with a letter (e.g. house-price)")
    mlab, task_dir = folder / f"{name}{SUFFIX}", folder / name
    for path in (mlab, folder / f"{name}{YAML_SUFFIX}", task_dir):
        if path.exists():
            raise ScaffoldError(f"{path} already exists; choose another name or remove it")
    if template is not None:
        return _copy_task(name, folder, template)
    files = {
        mlab: format_text(TASK_TEMPLATE.format(name=name, mlab=mlab.as_posix()), str(mlab)),
        task_dir / "env" / "train.py": TRAIN_PY.format(name=name),
        task_dir / "lite" / "make_lite.py": MAKE_LITE_PY.format(name=name, rows=300),
        task_dir / "solution" / "train.py": TRAIN_PY.format(name=name),
        task_dir / "demo-steps.txt": DEMO_STEPS.format(name=name),
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    demo = build_demonstration(task_dir / "solution", files[task_dir / "demo-steps.txt"], "demo-steps.txt")
    files[task_dir / "demo.json"] = json.dumps(demo, indent=2) + "\n"
    (task_dir / "demo.json").write_text(files[task_dir / "demo.json"], encoding="utf-8")
    generator: dict = {"__name__": "make_lite"}
    exec(compile(files[task_dir / "lite" / "make_lite.py"], "make_lite.py", "exec"), generator)  # our own text
    generator["write"](task_dir / "lite" / "data.csv")
    return Scaffolded(mlab, sorted(files) + [task_dir / "lite" / "data.csv"])


# ---- copying a task -----------------------------------------------------------------

def _find_task(name: str, folder: Path):
    """(file, module, comments, text) of the file declaring task `name`: in `folder`, ./tasks or
    the bundled tasks. `name` may also be the path of a file that declares one task."""
    from ..parser import parse_text
    from ..resources import tasks_dir
    from ..yaml.form import parse_yaml_text

    candidates = []
    if name.endswith((SUFFIX, YAML_SUFFIX)) and Path(name).is_file():
        candidates.append(Path(name))
    for base in (folder, Path("tasks"), tasks_dir()):
        if base.is_dir():
            candidates += sorted(p for p in base.iterdir() if p.name.endswith((SUFFIX, YAML_SUFFIX)))
    preferred = [p for p in candidates if p.name in (f"{name}{SUFFIX}", f"{name}{YAML_SUFFIX}")]
    for path in preferred + [p for p in candidates if p not in preferred]:
        text = path.read_text(encoding="utf-8", errors="replace")
        comments: list = []
        try:
            parse = parse_yaml_text if path.name.endswith(YAML_SUFFIX) else parse_text
            module = parse(text, str(path), comments)
        except DiagnosticError:  # a file that does not parse cannot be the template
            continue
        tasks = [d for d in module.decls if isinstance(d, A.Task)]
        if any(d.name.value == name for d in tasks) or (path == Path(name) and len(tasks) == 1):
            return path, module, comments, text
    raise ScaffoldError(f"no task named {name!r} in {folder}, tasks/ or the bundled tasks")


def _only_task(module: A.Module) -> str | None:
    tasks = [d.name.value for d in module.decls if isinstance(d, A.Task)]
    return tasks[0] if len(tasks) == 1 else None


def _moved(node, old: str, new: str):
    """A copy of an AST node whose strings starting with `old/` start with `new/` instead."""
    if isinstance(node, A.Str) and node.value.startswith(old + "/"):
        return replace(node, value=new + node.value[len(old):])
    if isinstance(node, tuple):
        return tuple(_moved(item, old, new) for item in node)
    if is_dataclass(node) and not isinstance(node, type) and not isinstance(node, A.Str):
        changes = {f.name: _moved(getattr(node, f.name), old, new) for f in fields(node) if f.name != "span"}
        return replace(node, **changes)
    return node


def _use_from(use: A.Use, source_folder: Path, folder: Path) -> A.Use:
    """The same `use`, its path now relative to the folder of the new file."""
    target = (source_folder / use.target.value).resolve()
    relative = Path(os.path.relpath(target, folder.resolve())).as_posix()
    return replace(use, target=replace(use.target, value=relative))


def _copy_task(name: str, folder: Path, template: str) -> Scaffolded:
    source, module, comments, text = _find_task(template, folder)
    task = next(d for d in module.decls if isinstance(d, A.Task) and d.name.value in (template, _only_task(module)))
    template = task.name.value
    starter = next((e.value.value for e in task.entries if isinstance(e, A.Starter) and isinstance(e.value, A.Str)),
                   None)
    old = starter.split("/")[0] if starter and "/" in starter else template
    renamed = _moved(replace(task, name=replace(task.name, value=name)), old, name)
    uses = tuple(u if u.std else _use_from(u, source.parent, folder) for u in module.uses)
    kept = A.Module(module.path, uses, (renamed,))
    dropped = [(d.span.line, d.span.end_line) for d in module.decls if d is not task]
    kept_comments = [c for c in comments if not any(start <= c.line <= end for start, end in dropped)]
    cmap = CommentMap(kept, source_comments(kept_comments, text), text)
    mlab = folder / f"{name}{SUFFIX}"
    header = (f"# Copied from the task {template} ({source.name}) by `mlabc new task {name} --from {template}`.\n"
              f"# TODO: change its title, problem and data, then run `mlabc check {mlab.as_posix()}`.\n")
    body = print_module(kept, cmap)
    folder.mkdir(parents=True, exist_ok=True)
    mlab.write_text(format_text(header + body, str(mlab)), encoding="utf-8")
    files = [mlab]
    origin = source.parent / old
    if origin.is_dir():
        shutil.copytree(origin, folder / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        files += sorted(p for p in (folder / name).rglob("*") if p.is_file())
    return Scaffolded(mlab, files)
