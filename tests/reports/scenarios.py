"""The runs of the report tests: a tiny task, and scripted replies that make each outcome happen.

Each scenario is a real `mlab run` with the offline scripted model (or the demo model, or a
model that cannot be called), so reports, labels and pages are computed from genuine run
folders. The task: twenty rows of (x, y) with y close to 2x; the starter predicts the mean of y.
A script `blend.py` written by the agent predicts (1 - W) * mean + W * 2x, so the weight W sets
the improvement over the baseline: about W (0.04 -> small improvement, 0.6 -> success).
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

TASK_SOURCE = '''use std "agents"

task tiny {
  title    "Predict y from x"
  category canonical
  problem  """
    Predict the column y of test.csv from the column x; y is close to twice x.
    Write submission.csv with the columns Id and y.
    """
  starter  "tiny/env"
  read_only ["train.csv"]
  data lite {
    from    csv "tiny/data.csv"
    split   random 0.25 seed 1
    id      "Id"
    answers ["y"]
    public  ["train.csv", "test.csv"]
    private ["answers.csv"]
  }
  data full {
    from    csv "tiny/data.csv"
    split   random 0.5 seed 2
    id      "Id"
    answers ["y"]
    public  ["train.csv", "test.csv"]
    private ["answers.csv"]
  }
  submission "submission.csv" columns ["Id", "y"]
  metric   mae on "y" lower_is_better
  baseline run "train.py"
  success  improvement >= 10%
  agent    research
  limits   { steps 8  time 10m  script_timeout 3s }
  hardware { cpus 1  gpus 0  memory 1GiB }
}
'''

STARTER = '''"""Starter: predict the mean of y for every test row."""
import csv

with open("train.csv") as f:
    ys = [float(r["y"]) for r in csv.DictReader(f)]
mean = sum(ys) / len(ys)
with open("test.csv") as f:
    ids = [r["Id"] for r in csv.DictReader(f)]
with open("submission.csv", "w") as f:
    f.write("Id,y\\n" + "".join(f"{i},{mean}\\n" for i in ids))
print("wrote the mean prediction")
'''


def blend_script(weight: float) -> str:
    return ("import csv\n"
            f"W = {weight}\n"
            "rows = list(csv.DictReader(open('train.csv')))\n"
            "mean = sum(float(r['y']) for r in rows) / len(rows)\n"
            "test = list(csv.DictReader(open('test.csv')))\n"
            "with open('submission.csv', 'w') as f:\n"
            "    f.write('Id,y\\n' + ''.join(f\"{t['Id']},{(1 - W) * mean + W * 2 * float(t['x'])}\\n\" for t in test))\n"
            "print(f'blended with W={W} on {len(rows)} training rows')\n")


def write_task(folder: Path) -> Path:
    """The tiny task's source, starter and data under `folder`; returns the .mlab path."""
    (folder / "tiny" / "env").mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    rows = ["Id,x,y"]
    for number in range(1, 21):
        x = round(rng.uniform(0, 10), 3)
        rows.append(f"{number},{x},{round(2 * x + rng.uniform(-0.1, 0.1), 3)}")
    (folder / "tiny" / "data.csv").write_text("\n".join(rows) + "\n")
    (folder / "tiny" / "env" / "train.py").write_text(STARTER)
    (folder / "tiny.mlab").write_text(TASK_SOURCE)
    return folder / "tiny.mlab"


# -- replies -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    action: str
    payload: dict
    fact: str = "Nothing is claimed yet."
    plan: str = "1. Write blend.py, run it, submit. Status: in progress."


def research(step: Step) -> str:
    return (f"Reflection: the last observation is read.\nResearch Plan and Status: {step.plan}\n"
            f"Fact Check: {step.fact}\nThought: take the next step of the plan.\n"
            f"Action: {step.action}\nAction Input: {json.dumps(step.payload)}\n")


def react(step: Step) -> str:
    return f"Thought: take the next step.\nAction: {step.action}\nAction Input: {json.dumps(step.payload)}\n"


def autogpt(step: Step) -> str:
    return json.dumps({"thoughts": {"text": "next step", "reasoning": "the plan says so", "plan": step.plan,
                                    "criticism": "none", "speak": "working"},
                       "command": {"name": step.action, "args": step.payload}})


FORMATS = {"research": research, "react": react, "autogpt-style": autogpt}


def blend_steps(weight: float, fact: str = "Nothing is claimed yet.", plan: str | None = None) -> list[Step]:
    plan = plan or "1. Write blend.py, run it, submit. Status: in progress."
    return [Step("Write File", {"file_name": "blend.py", "content": blend_script(weight)}),
            Step("Execute Script", {"script_name": "blend.py"}),
            Step("Final Answer", {"final_answer": f"blended with weight {weight}"}, fact=fact, plan=plan)]


LIST = Step("List Files", {"dir_path": "."})
SUBMIT = Step("Final Answer", {"final_answer": "done"})


@dataclass(frozen=True)
class Scenario:
    name: str
    agent: str
    seed: int
    steps: list[Step] = field(default_factory=list)
    raw: list[str] | None = None     # replies given as they are (for unparsable ones)
    args: tuple[str, ...] = ()
    model: str | None = None         # a model other than the scripted one
    expected: tuple[str, ...] = ()   # failure labels the run must get

    def replies(self) -> list[str]:
        return self.raw if self.raw is not None else [FORMATS[self.agent](s) for s in self.steps]


SCENARIOS = [
    # the grid of the report tests: two agents × three seeds, same model
    Scenario("research-0", "research", 0, blend_steps(
        0.6, fact="blend.py ran with W 0.6 on 15 training rows: confirmed by the script output.")),
    Scenario("research-1", "research", 1, blend_steps(0.04), expected=("small improvement",)),
    Scenario("research-2", "research", 2, blend_steps(
        0.8, fact="The validation MAE is 0.0421: confirmed by the output above.")),
    Scenario("react-0", "react", 0, blend_steps(0.5)),
    Scenario("react-1", "react", 1, [LIST, SUBMIT], expected=("no submission",)),
    Scenario("react-2", "react", 2, [Step("Write File", {"file_name": "submission.csv",
                                                         "content": "Id,wrong\n1,2\n"}), SUBMIT],
             expected=("submission format error",)),
    # one run per failure label
    Scenario("format", "research", 10, raw=["I will just think about it."] * 6,
             expected=("response format error", "no submission")),
    Scenario("steps-limit", "research", 11, [LIST] * 6, args=("--steps", "2"), expected=("limit reached",)),
    Scenario("tokens-limit", "research", 12, [LIST] * 3, args=("--tokens", "500"), expected=("limit reached",)),
    Scenario("crash", "research", 13, [Step("Write File", {"file_name": "crash.py", "content": "raise SystemExit(3)\n"}),
                                       Step("Execute Script", {"script_name": "crash.py"}), SUBMIT],
             expected=("script failure", "no submission")),
    Scenario("timeout", "research", 14, [Step("Write File", {"file_name": "slow.py",
                                                             "content": "import time\ntime.sleep(60)\n"}),
                                         Step("Execute Script", {"script_name": "slow.py"}), SUBMIT],
             expected=("script failure", "no submission")),
    Scenario("api", "research", 15, model="nosuchprovider/model-x",
             args=("--fast-model", "mlab/demo", "--edit-model", "mlab/demo"), expected=("model API failure",)),
    Scenario("claim", "research", 16, blend_steps(
        0.04, plan="1. Write blend.py, run it, submit. Status: done, achieved MAE 0.0815 (confirmed)."),
             expected=("small improvement", "hallucinated claim")),
    Scenario("autogpt-claim", "autogpt-style", 17, blend_steps(
        0.04, plan="- result: MAE 0.0377 confirmed by the last run"), expected=("hallucinated claim",)),
    Scenario("demo", "research", 0, model="mlab/demo", expected=("small improvement",)),
    Scenario("full-variant", "research", 0, blend_steps(0.6), args=("--data", "full")),
]
