"""Helpers of the agent-loop tests: a tiny task, scripted replies, `mlab` called in-process, run folders.

The tiny task has 20 rows and starters that need nothing but the standard library, so a whole
run takes well under a second; only the demonstration test uses house-price.
"""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

TRAIN_PY = """\
import csv

train = list(csv.DictReader(open("train.csv")))
mean = sum(float(row["y"]) for row in train) / len(train)
test = list(csv.DictReader(open("test.csv")))
with open("submission.csv", "w", newline="") as out:
    writer = csv.writer(out)
    writer.writerow(["Id", "y"])
    for row in test:
        writer.writerow([row["Id"], mean])
print(f"wrote {len(test)} predictions")
"""

# The better model of the task (y = 2x + 1 exactly), for runs that should succeed.
FIT_PY = TRAIN_PY.replace('writer.writerow([row["Id"], mean])',
                          'writer.writerow([row["Id"], 2 * float(row["x"]) + 1])')

SLOW_PY = """\
import time

time.sleep(1)
print("slept one second")
"""

CHATTY_PY = """\
for i in range(100):
    print(f"row {i}: " + "x" * 60)
"""

DUPLICATE_IDS_PY = """\
import csv

test = list(csv.DictReader(open("test.csv")))
with open("submission.csv", "w") as out:
    out.write("Id,y\\n")
    for row in test + test[:1]:
        out.write(f"{row['Id']},1.0\\n")
"""

NAN_VALUES_PY = """\
import csv

test = list(csv.DictReader(open("test.csv")))
with open("submission.csv", "w") as out:
    out.write("Id,y\\n")
    for row in test:
        out.write(f"{row['Id']},nan\\n")
"""

TASK_SOURCE = """\
use std "agents"

task tiny {
  title "A tiny task"
  category canonical
  problem "Predict y from x. Write submission.csv with the columns Id and y."
  starter "env"
  read_only ["train.csv", "test.csv"]
  data lite { from csv "rows.csv" split random 0.2 seed 1 id "Id" answers ["y"]
              public ["train.csv", "test.csv"] private ["answers.csv"] }
  submission "submission.csv" columns ["Id", "y"]
  metric mae on "y" lower_is_better
  baseline run "train.py"
  success improvement >= 10%
  agent research
  limits { steps 30  time 30m  script_timeout 2m }
}

# The research agent with its step counter moved after the problem, so that everything up
# to the problem is the same at every step.
agent tiny-steady extends research {
  prompt \"\"\"
    You are a researcher working in a workspace, your current directory.

    Tools you can use:
    {{ tools }}

    Research problem:
    {{ task.problem }}

    Write every reply in exactly this format:
    {{ reply_format }}
    {% if history %}
    Your most recent steps, oldest first:
    {{ history }}
    {% endif %}
    This is step {{ step }} of at most {{ max_steps }}. Now write your next reply.
    \"\"\"
}
"""


def write_tiny_task(folder: Path) -> Path:
    """The tiny task's source, starter folder and data; returns the .mlab path."""
    env = folder / "env"
    env.mkdir(parents=True, exist_ok=True)
    for name, text in {"train.py": TRAIN_PY, "fit.py": FIT_PY, "slow.py": SLOW_PY, "chatty.py": CHATTY_PY,
                       "duplicate_ids.py": DUPLICATE_IDS_PY, "nan_values.py": NAN_VALUES_PY}.items():
        (env / name).write_text(text)
    rows = ["Id,x,y"] + [f"{i},{i},{2 * i + 1}" for i in range(20)]
    (folder / "rows.csv").write_text("\n".join(rows) + "\n")
    source = folder / "tiny.mlab"
    source.write_text(TASK_SOURCE)
    return source


# -- replies in each agent's format -------------------------------------------------------

def research_reply(action: str, payload: dict, thought: str = "one step at a time") -> str:
    """A reply with every section of the research agent."""
    return (f"Reflection: {thought}\nResearch Plan and Status: 1. explore 2. run 3. submit\n"
            f"Fact Check: nothing claimed yet\nThought: {thought}\nAction: {action}\n"
            f"Action Input: {json.dumps(payload)}\n")


def sections_reply(sections: list[str], action: str, payload: dict) -> str:
    """A labelled-sections reply with the given text sections, then Action and Action Input."""
    text = "".join(f"{name}: some {name.lower()}\n" for name in sections)
    return f"{text}Action: {action}\nAction Input: {json.dumps(payload)}\n"


def json_reply(action: str, payload: dict) -> str:
    """An AutoGPT-style reply: one JSON object with thoughts and a command."""
    return json.dumps({"thoughts": {"text": "look first", "reasoning": "nothing is known yet", "plan": "- look",
                                    "criticism": "none", "speak": "looking"},
                       "command": {"name": action, "args": payload}})


def scripted(folder: Path, replies: list[str], name: str = "replies.json") -> str:
    """The model name that plays `replies` in order."""
    path = Path(folder) / name
    path.write_text(json.dumps(replies))
    return f"mlab/scripted:{path}"


# -- running mlab in-process ---------------------------------------------------------------

def mlab(*args: str) -> tuple[int, str, str]:
    """`mlab ARGS` through the CLI's main, in this process: exit code, stdout, stderr."""
    from mlab.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def only_run(runs_dir: Path) -> Path:
    """The single run folder under runs_dir."""
    runs = [p for p in Path(runs_dir).iterdir() if p.is_dir()]
    assert len(runs) == 1, runs
    return runs[0]


def trace(run_dir: Path) -> list[dict]:
    """The complete records of a run's trace."""
    from mlab.trace import read_trace

    contents = read_trace(Path(run_dir) / "trace.jsonl")
    assert contents.torn == b""
    return contents.records


def result(run_dir: Path) -> dict:
    """result.json, checked against spec/result.schema.json."""
    from mlabc.schemas import problems

    document = json.loads((Path(run_dir) / "result.json").read_text())
    assert problems("result", document) == []
    return document


def trace_problems(run_dir: Path) -> list[str]:
    """Every record of the trace checked against spec/trace.schema.json."""
    from mlabc.schemas import problems

    return [f"step {r.get('step')}: {p}" for r in trace(run_dir) for p in problems("trace", r)]


def actions_taken(run_dir: Path) -> list[tuple]:
    """(action, input, status) of every record of a run."""
    return [(r["action"], r["action_input"], r["status"]) for r in trace(run_dir)]


def interrupted_after_first_step(monkeypatch, *args) -> tuple[int, str, str]:
    """`mlab run ARGS` stopped as by a second Ctrl-C right after its first step (resumable)."""
    from mlab.cli import run as run_command

    shown = run_command.Display.step

    def stop_after_the_first_step(self, record, observation, usage):
        shown(self, record, observation, usage)
        if record["step"] == 1:
            raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(run_command.Display, "step", stop_after_the_first_step)
        return mlab("run", *args)


# -- on a terminal --------------------------------------------------------------------------

def on_a_terminal(argv: list[str], cwd: Path, timeout: float = 120) -> list[tuple[float, str]]:
    """Run argv with a pseudo-terminal as stdout: what it wrote, chunk by chunk, with the time of each."""
    import os
    import pty
    import select
    import subprocess
    import time

    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "200", "LINES": "40", "TERM": "xterm"}
    child = subprocess.Popen(argv, stdout=follower, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                             cwd=cwd, env=env)
    os.close(follower)
    chunks, start = [], time.monotonic()
    try:
        while time.monotonic() - start < timeout:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                try:
                    data = os.read(leader, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not data:
                    break
                chunks.append((time.monotonic() - start, data.decode("utf-8", "replace")))
            elif child.poll() is not None:
                break
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        os.close(leader)
    return chunks
