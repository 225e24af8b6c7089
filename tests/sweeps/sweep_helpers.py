"""Small tasks and experiments for the sweep tests, and what the tests look at in a sweep folder."""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

TINY_SCRIPT = """\
import csv, time
time.sleep({sleep})  # a run long enough to be stopped in the middle
rows = list(csv.DictReader(open("train.csv")))
mean = sum(float(r["y"]) for r in rows) / len(rows)
with open("submission.csv", "w") as out:
    out.write("Id,y\\n")
    for r in csv.DictReader(open("test.csv")):
        out.write(f"{{r['Id']}},{{mean}}\\n")
print("wrote submission.csv")
"""

TINY_TASK = """\
use std "agents"
task tiny {
  title "A tiny task for sweeps"
  category canonical
  problem "Predict y from x; write submission.csv with Id and y."
  starter "tiny/env"
  data lite {
    from csv "tiny/rows.csv"
    split random 0.25 seed 1
    id "Id"
    answers ["y"]
    public ["train.csv", "test.csv"]
    private ["answers.csv"]
  }
  submission "submission.csv" columns ["Id", "y"]
  metric mae on "y" lower_is_better
  baseline run "train.py"
  hardware { cpus 1 gpus 0 memory 1GiB }
}
"""


def write_tiny_task(folder: Path, sleep: float = 1.0) -> Path:
    """tiny.mlab (with its starter and data) in folder: the offline demo model lists the files,
    runs train.py (which sleeps, then predicts the mean) and submits."""
    env = folder / "tiny" / "env"
    env.mkdir(parents=True, exist_ok=True)
    (env / "train.py").write_text(TINY_SCRIPT.format(sleep=sleep))
    draw = random.Random(0)
    rows = ["Id,x,y"] + [f"{i},{i % 7},{(i % 7) * 2 + draw.random():.3f}" for i in range(60)]
    (folder / "tiny" / "rows.csv").write_text("\n".join(rows) + "\n")
    (folder / "tiny.mlab").write_text(TINY_TASK)
    return folder / "tiny.mlab"


def write_experiment(folder: Path, body: str, name: str = "sweeps") -> Path:
    """An experiments file using the tiny task and the bundled house-price task."""
    source = folder / f"{name}.mlab"
    source.write_text(f'use "tiny.mlab"\nuse "{REPO / "tasks" / "house-price.mlab"}"\n' + textwrap.dedent(body))
    return source


def compile_build(source: Path, out: Path) -> Path:
    from mlabc.api import compile_paths

    compiled, manifest = compile_paths([str(source)], out)
    assert manifest is not None, [d.message for d in compiled.diagnostics]
    return out


def sweep_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "mlab.cli", "sweep", *args]


def run_sweep(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(sweep_command(*args), cwd=cwd, capture_output=True, text=True, timeout=timeout)


def run_folders(sweep: Path) -> list[Path]:
    runs = sweep / "runs"
    return sorted(p for p in runs.iterdir() if p.is_dir() and not p.name.startswith(".")) if runs.is_dir() else []


def trace_steps(run: Path) -> list[int]:
    path = run / "trace.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line)["step"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def state(sweep: Path) -> dict:
    return json.loads((sweep / "sweep.json").read_text(encoding="utf-8"))


def processes_mentioning(text: str) -> list[int]:
    """Live processes whose command line holds text (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            status = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in command and status != "Z":
            found.append(int(entry.name))
    return found


def parent_of(pid: int) -> int:
    return int((Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[1])


def command_of(pid: int) -> str:
    return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
