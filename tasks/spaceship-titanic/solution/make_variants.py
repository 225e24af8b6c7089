"""Write the ``variants`` of ``tasks/spaceship-titanic/demo.json``: what ``mlab/demo`` hands a
tree-search agent (runtime/models/tree_demo.py).

The rest of demo.json (the steps a linear agent plays) is left as it is. The variants are the
scripts in ``solution/tree/``; each description starts with the operator it answers (``draft:``,
``improve:`` or ``debug:``, a debug variant fixing the variant before it), then the plan the reply
states. Together they make a tree: two drafts (one much weaker), an improvement that beats its
parent, an improvement that fails with a KeyError and the debug step that fixes it.

This script prepares the task's lite data as the harness does (mlab's own preparation), runs
every variant there as train.py and stops if one does not behave as ``VARIANTS`` says (prints
"Validation score: N" and writes submission.csv, or fails), or if the accuracies are not in the
order ``ORDER`` claims:

    python tasks/spaceship-titanic/solution/make_variants.py

It lives in solution/ because the data's digest covers the generator's folder except the
demonstration and the solution: a script beside make_data.py would make the data look changed.
"""

from __future__ import annotations

import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

TASK = pathlib.Path(__file__).resolve().parent.parent
REPO = TASK.parent.parent
DEMO = TASK / "demo.json"
TREE = TASK / "solution" / "tree"
CODE_FILE = "train.py"

VARIANTS = [  # (script in solution/tree/, whether it scores, description)
    ("draft_amounts.py", True,
     "draft: Keep the starter's logistic regression on the four categorical columns and add the "
     "five amounts spent on board as they are (in thousands, missing as zero)."),
    ("draft_logistic.py", True,
     "draft: A logistic regression on the four categorical columns and the spending on a log "
     "scale: the log of each amount, of the total, and a flag for passengers who spent nothing "
     "(sleepers and children spend nothing, and the amounts are very skewed)."),
    ("improve_cabin.py", True,
     "improve: Add the cabin to the logistic regression: split \"deck/num/side\" into its parts, "
     "one-hot encode the deck and the side, and add the cabin number."),
    ("improve_mates.py", False,
     "improve: Add the travel group: for each passenger, whether any group-mates' labels are "
     "known and the share of them who were transported, leaving the passenger's own label out."),
    ("debug_mates.py", True,
     "debug: The run stopped with KeyError: 'Column not found: Transported': the table of known "
     "labels names its column \"label\". Read that column; nothing else changes."),
]
ORDER = ["draft_amounts.py", "draft_logistic.py", "improve_cabin.py", "debug_mates.py"]  # worst to best


def public_data() -> pathlib.Path:
    sys.path.insert(0, str(REPO))
    from mlab.build import resolve_task
    from mlab.data.prepare import prepare_data

    return prepare_data(resolve_task("spaceship-titanic"), "lite").public


def main() -> None:
    demonstration = json.loads(DEMO.read_text(encoding="utf-8"))
    variants, scores = [], {}
    with tempfile.TemporaryDirectory(prefix="spaceship-variants-") as tmp:
        work = pathlib.Path(tmp)
        for name in ("train.csv", "test.csv"):
            shutil.copy(public_data() / name, work / name)
        for name, scores_expected, description in VARIANTS:
            code = (TREE / name).read_text(encoding="utf-8")
            (work / "submission.csv").unlink(missing_ok=True)
            (work / CODE_FILE).write_text(code)
            done = subprocess.run([sys.executable, CODE_FILE], cwd=work, capture_output=True, text=True)
            found = re.search(r"Validation score: ([0-9.]+)", done.stdout)
            scored = done.returncode == 0 and found is not None and (work / "submission.csv").is_file()
            if scored != scores_expected:
                raise SystemExit(f"variant {name} should {'' if scores_expected else 'not '}score; it printed:\n"
                                 f"{done.stdout}{done.stderr}")
            if scored:
                scores[name] = float(found.group(1))
            variants.append({"description": description, "files": {CODE_FILE: code}})
    if sorted(scores, key=scores.get) != ORDER:
        raise SystemExit(f"the variants' validation accuracies are not in the claimed order: {scores}")
    demonstration["variants"] = variants
    DEMO.write_text(json.dumps(demonstration, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {len(variants)} variants into {DEMO}; validation accuracy "
          + ", ".join(f"{name} {score:.4f}" for name, score in scores.items()))


if __name__ == "__main__":
    main()
