"""Write the ``variants`` of a task's demo.json: the solutions ``mlab/demo`` hands a tree-search
agent (runtime/mlab/models/tree_demo.py, docs/tasks.md).

    python tasks/make_variants.py house-price spaceship-titanic imdb

For each task it reads ``tasks/TASK/solution/tree/variants.json``::

    {"code_file": "train.py",
     "variants": [{"script": "draft_x.py", "scores": true, "description": "draft: ..."}, ...],
     "order": ["draft_x.py", ...]}          # the scoring scripts, worst validation score first

Each script is made from a template, ``solution/tree/SCRIPT.j2`` (Jinja): the task's
``base.py.j2`` holds the script its variants share, the parts that differ as blocks (with the text
most variants have), and each variant's template extends it (or another variant's) and overrides
only the blocks it changes. The script prepares the task's lite data as the harness does (mlab's
own preparation), runs every script there as the code file, and stops if one does not behave as
its entry says (prints "Validation score: N" and writes the submission, or fails) or if the scores
do not rank as ``order`` claims (in the task's metric direction). Then it replaces the ``variants``
of tasks/TASK/demo.json and leaves the rest of the file as it is.

The templates live in solution/ because a generated task's data digest covers the generator's
folder except the demonstration and the solution.
"""

from __future__ import annotations

import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

TASKS = pathlib.Path(__file__).resolve().parent
SCORE = re.compile(r"Validation score: ([-+0-9.eE]+)")


def prepared(task_name: str):
    sys.path.insert(0, str(TASKS.parent))
    from mlab.build import resolve_task
    from mlab.data.prepare import prepare_data

    task = resolve_task(task_name)
    return task, prepare_data(task, "lite").public


def scripts(task_name: str) -> dict[str, str]:
    """Each variant's script (by its name in variants.json) made from its template."""
    import jinja2

    tree = TASKS / task_name / "solution" / "tree"
    manifest = json.loads((tree / "variants.json").read_text(encoding="utf-8"))
    # the block tags take whole lines, which leave no trace in the script
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(tree), trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    return {entry["script"]: env.get_template(entry["script"] + ".j2").render() for entry in manifest["variants"]}


def write_variants(task_name: str) -> str:
    tree = TASKS / task_name / "solution" / "tree"
    manifest = json.loads((tree / "variants.json").read_text(encoding="utf-8"))
    made = scripts(task_name)
    code_file = manifest.get("code_file", "train.py")
    task, public = prepared(task_name)
    submission = task.view.submission.file if task.view.submission else "submission.csv"
    lower_is_better = task.view.metric.direction == "lower_is_better"
    variants, scores = [], {}
    with tempfile.TemporaryDirectory(prefix=f"{task_name}-variants-") as tmp:
        work = pathlib.Path(tmp)
        for path in public.iterdir():
            (shutil.copytree if path.is_dir() else shutil.copy)(path, work / path.name)
        for entry in manifest["variants"]:
            name, expected = entry["script"], entry["scores"]
            code = made[name]
            (work / submission).unlink(missing_ok=True)
            (work / code_file).write_text(code, encoding="utf-8")
            done = subprocess.run([sys.executable, code_file], cwd=work, capture_output=True, text=True)
            found = SCORE.findall(done.stdout)
            scored = done.returncode == 0 and bool(found) and (work / submission).is_file()
            if scored != expected:
                raise SystemExit(f"{task_name}: {name} should {'' if expected else 'not '}score; it printed:\n"
                                 f"{done.stdout}{done.stderr}")
            if scored:
                scores[name] = float(found[-1])
            variants.append({"description": entry["description"], "files": {code_file: code}})
    ranked = sorted(scores, key=scores.get, reverse=lower_is_better)
    if ranked != manifest["order"]:
        raise SystemExit(f"{task_name}: the validation scores do not rank as claimed ({manifest['order']}): {scores}")
    demo = TASKS / task_name / "demo.json"
    document = json.loads(demo.read_text(encoding="utf-8"))
    document["variants"] = variants
    demo.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return (f"wrote {len(variants)} variants into {demo}; validation "
            + ", ".join(f"{name} {score:g}" for name, score in scores.items()))


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit(__doc__.split("\n\n")[1])
    for task_name in sys.argv[1:]:
        print(write_variants(task_name))


if __name__ == "__main__":
    main()
