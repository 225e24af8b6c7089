"""Generate ``tasks/house-price/demo.json``: the demonstration the keyless demo plays.

It is a version-2 demonstration (docs/tasks.md): per step the action, its input and
the texts of the agent's sections by role (reflection, plan, fact-check, thought), so
that ``mlab/demo`` renders it for whichever agent runs.  The script it writes is the reference
solution, ``solution/train_improved.py``, read from that file.  The run it acts out:

  1. list the workspace,
  2. inspect train.py,
  3. execute train.py (baseline score),
  4. read data_description.txt,
  5. write train_improved.py (gradient boosting on log price, every column,
     ordinal-encoded categoricals, a few derived features),
  6. execute train_improved.py,
  7. give the final answer.

The numbers quoted in the later replies must be the ones the earlier
observations show.  So this script does not hard-code them: it recreates the
workspace the harness builds (``split`` below: 80/20 random split of
lite/houses.csv, seed 42, test rows drawn with ``DataFrame.sample``), runs
both scripts there and copies the printed "Validation MAE" values into the
replies.  If the harness ever splits differently, change ``split`` to match
and rerun:

    python tasks/house-price/lite/make_demo.py          # rewrites demo.json
    python tasks/house-price/lite/make_demo.py --check  # also prints test MAE

The demonstration's ``variants`` (the solutions ``mlab/demo`` hands a tree-search agent) are
written by ``python tasks/make_variants.py house-price`` from the templates in ``solution/tree/``,
as every task's are; this script keeps the ones demo.json holds.

Requires pandas and scikit-learn (the same ones the task's scripts use).
"""

from __future__ import annotations

import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

import pandas as pd

TASK = pathlib.Path(__file__).resolve().parent.parent
HOUSES = TASK / "lite" / "houses.csv"
ENV = TASK / "env"
OUT = TASK / "demo.json"
SOLUTION = TASK / "solution"  # the reference solution, as the demonstration writes it

IMPROVED_NAME = "train_improved.py"

# The script the demo writes with "Write File": the reference solution, kept as its own file.
IMPROVED_SCRIPT = (SOLUTION / IMPROVED_NAME).read_text(encoding="utf-8")

def split(houses: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Mimic the harness: 20% of rows (seed 42) become the test set."""
    test = houses.sample(frac=0.2, random_state=42)
    train = houses.drop(test.index)
    return train, test


def run_script(workdir: pathlib.Path, name: str) -> tuple[str, pd.DataFrame]:
    done = subprocess.run([sys.executable, name], cwd=workdir, capture_output=True,
                          text=True, check=True)
    return done.stdout, pd.read_csv(workdir / "submission.csv")


def validation_mae(stdout: str) -> str:
    found = re.search(r"Validation MAE: ([\d,]+)", stdout)
    if not found:
        raise SystemExit(f"no 'Validation MAE' line in output:\n{stdout}")
    return found.group(1)


def test_mae(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    merged = submission.merge(answers[["Id", "SalePrice"]], on="Id", suffixes=("_pred", ""))
    assert len(merged) == len(answers), "submission does not cover every test row"
    return float((merged["SalePrice_pred"] - merged["SalePrice"]).abs().mean())


def reply(reflection: str, plan: str, facts: str, thought: str,
          action: str, action_input: dict) -> dict:
    """One step of the demonstration: the section texts by role, the action and its input."""
    return {
        "sections": {"reflection": reflection, "plan": plan, "fact-check": facts, "thought": thought},
        "action": action,
        "input": action_input,
    }


def build_replies(base_mae: str, new_mae: str, n_test: int, n_lines: int) -> list[dict]:
    base = int(base_mae.replace(",", ""))
    new = int(new_mae.replace(",", ""))
    drop_pct = round(100 * (base - new) / base)

    plan_0 = (
        "\n1. Look at the files in the workspace and understand the task and the data."
        "\n2. Read train.py and run it to get a baseline validation MAE."
        "\n3. Improve the model (more features, categorical columns, a stronger learner)."
        "\n4. Check that the new script beats the baseline and writes submission.csv."
        "\nStatus: starting step 1."
    )
    plan_1 = plan_0.replace("Status: starting step 1.",
                            "Status: step 1 in progress (files listed), reading train.py next.")
    plan_2 = plan_0.replace("Status: starting step 1.",
                            "Status: step 1 done; step 2 in progress (train.py read, not yet run).")
    plan_3 = plan_0.replace(
        "Status: starting step 1.",
        f"Status: step 2 done: baseline validation MAE is {base_mae}. "
        "Reading data_description.txt before step 3.")
    plan_4 = plan_0.replace(
        "Status: starting step 1.",
        f"Status: step 2 done (baseline validation MAE {base_mae}). Step 3 in progress: "
        f"writing {IMPROVED_NAME} with gradient boosting on log(SalePrice), all columns, "
        "ordinal-encoded categoricals and a few derived features.")
    plan_5 = plan_4.replace("Step 3 in progress: writing", "Step 3 done: wrote") + \
        f" Step 4: running {IMPROVED_NAME}."
    plan_6 = plan_0.replace(
        "Status: starting step 1.",
        f"Status: all steps done. Baseline validation MAE {base_mae}; "
        f"{IMPROVED_NAME} validation MAE {new_mae} (about {drop_pct}% lower); "
        f"submission.csv written for {n_test} test rows.")

    return [
        reply(
            "This is the first step, so there is no earlier observation to reflect on.",
            plan_0,
            "Nothing has been observed yet, so there are no facts to check.",
            "I should see what is in the workspace before doing anything else.",
            "List Files", {"dir_path": "."},
        ),
        reply(
            "The workspace holds train.csv, test.csv, data_description.txt and the "
            "starter script train.py.",
            plan_1,
            "The file names come straight from the listing above.",
            "Read the whole starter script to see which model and features it uses "
            "and how it reports its score.",
            "Inspect Script Lines",
            {"script_name": "train.py", "start_line_number": 1, "end_line_number": n_lines},
        ),
        reply(
            "train.py reads train.csv and test.csv, uses only seven numeric columns "
            "(LotArea, YearBuilt, 1stFlrSF, 2ndFlrSF, FullBath, BedroomAbvGr, "
            "TotRmsAbvGrd), fits a RandomForestRegressor with 50 trees, prints the "
            "MAE on a held-out quarter of train.csv (random_state=1), then refits on "
            "all rows and writes submission.csv with Id and SalePrice.",
            plan_2,
            "Model, feature list, hold-out size and output file are all read from the "
            "script lines shown above. No score has been measured yet.",
            "Run the script unchanged to get the baseline number to beat.",
            "Execute Script", {"script_name": "train.py"},
        ),
        reply(
            f"The baseline ran without errors. It printed 'Validation MAE: {base_mae}' "
            f"and wrote submission.csv with {n_test} rows.",
            plan_3,
            f"Baseline validation MAE {base_mae}: confirmed by the script output above. "
            f"{n_test} submission rows: confirmed by the same output.",
            "Most of the columns are ignored by the baseline, including many text "
            "columns. Before using them I want to know what they mean and how missing "
            "values are coded.",
            "Read File", {"file_name": "data_description.txt"},
        ),
        reply(
            "data_description.txt explains every column. Many text columns are "
            "ratings (Ex/Gd/TA/Fa/Po) or types, an empty value often means the house "
            "has no such thing (no garage, no basement, no pool), MSSubClass is a "
            "dwelling code rather than a number, and TotalBsmtSF plus GrLivArea give "
            "the whole floor area.",
            plan_4,
            "The column meanings above are taken from data_description.txt. "
            f"Baseline validation MAE {base_mae}: confirmed earlier.",
            "Gradient boosting handles missing values and ordinal-encoded categories "
            "natively, and sale prices are skewed, so modelling log(SalePrice) should "
            "help. I keep the same hold-out split as train.py so the scores can be "
            "compared, and still write submission.csv for every test row.",
            "Write File", {"file_name": IMPROVED_NAME, "content": IMPROVED_SCRIPT},
        ),
        reply(
            f"{IMPROVED_NAME} was written.",
            plan_5,
            "That the file was written is confirmed by the observation above. Its "
            "score is not known yet.",
            "Run the new script and compare its validation MAE with the baseline.",
            "Execute Script", {"script_name": IMPROVED_NAME},
        ),
        reply(
            f"{IMPROVED_NAME} ran without errors. It printed 'Validation MAE: {new_mae}' "
            f"against {base_mae} for the baseline, about {drop_pct}% lower, and wrote "
            f"submission.csv with {n_test} rows.",
            plan_6,
            f"Validation MAE {new_mae} and {n_test} submission rows: confirmed by the "
            f"output above. Baseline {base_mae}: confirmed by the earlier run of train.py. "
            f"The {drop_pct}% drop is computed from those two numbers.",
            "The improvement is large and submission.csv is in place, so I can stop here.",
            "Final Answer",
            {"final_answer": (
                f"I replaced the baseline random forest (7 numeric features, validation "
                f"MAE {base_mae}) with {IMPROVED_NAME}: a HistGradientBoostingRegressor "
                "trained on log(SalePrice) using every column, with the text columns "
                "ordinal-encoded and treated as categorical, plus derived features "
                "(total floor area, total bathrooms, house age and years since "
                f"remodelling). On the same held-out quarter of train.csv its "
                f"validation MAE is {new_mae}, about {drop_pct}% lower. It refits on all "
                f"of train.csv and wrote submission.csv (Id,SalePrice) for all {n_test} "
                "test rows."
            )},
        ),
    ]


def main() -> None:
    check = "--check" in sys.argv[1:]
    houses = pd.read_csv(HOUSES)
    train, test = split(houses)
    n_lines = len((ENV / "train.py").read_text().splitlines())

    with tempfile.TemporaryDirectory(prefix="house-price-demo-") as tmp:
        work = pathlib.Path(tmp)
        train.to_csv(work / "train.csv", index=False)
        test.drop(columns=["SalePrice"]).to_csv(work / "test.csv", index=False)
        shutil.copy(ENV / "train.py", work / "train.py")
        (work / IMPROVED_NAME).write_text(IMPROVED_SCRIPT)

        base_out, base_sub = run_script(work, "train.py")
        new_out, new_sub = run_script(work, IMPROVED_NAME)

    base_mae, new_mae = validation_mae(base_out), validation_mae(new_out)
    steps = build_replies(base_mae, new_mae, len(test), n_lines)
    variants = json.loads(OUT.read_text(encoding="utf-8")).get("variants", []) if OUT.is_file() else []
    demonstration = {"format": "mlab-demonstration", "version": 2, "solution": IMPROVED_NAME,
                     "steps": steps, "variants": variants}
    OUT.write_text(json.dumps(demonstration, indent=2) + "\n")
    print(f"wrote {OUT} ({len(steps)} steps) from {SOLUTION / IMPROVED_NAME}; validation MAE "
          f"baseline {base_mae}, improved {new_mae}")
    print(f"kept its {len(variants)} variants for tree search (python tasks/make_variants.py house-price "
          "writes them)")

    if check:
        base_test, new_test = test_mae(base_sub, test), test_mae(new_sub, test)
        print(f"test MAE: baseline {base_test:,.0f}, improved {new_test:,.0f} "
              f"({100 * (base_test - new_test) / base_test:.1f}% lower)")
        if new_test > 0.9 * base_test:
            raise SystemExit("improved script is not at least 10% better on the test rows")


if __name__ == "__main__":
    main()
