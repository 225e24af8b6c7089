"""Benchmark: the memory of the harness process of one run, and which heavy libraries it holds.

A tiny tabular task is run with the offline scripted model (write a script, run it, call Validate
Submission, submit) by `mlab run` in a fresh process, once to prepare its data and once
measured (as every run of a sweep after the first finds its data prepared). Printed: the
measured process's peak resident memory (ru_maxrss; scripts and scoring run in child processes
of their own and are not counted), and whether pandas, scikit-learn, numpy and litellm were
imported by it; for scale, the peak of a process that imports litellm alone. Targets: <= 250 MB,
and neither pandas nor scikit-learn in the process.

    python bench/memory.py [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_MB = 250

RUN = """\
import json, resource, sys
sys.path.insert(0, sys.argv[1])
from scenarios import write_task
from mlab.cli import main
code = main(["run", sys.argv[2], "--agent", "research", "--model", "mlab/scripted:" + sys.argv[3],
             "--runs-dir", sys.argv[4], "--plain"])
heavy = {name: name in sys.modules for name in ("pandas", "sklearn", "numpy", "litellm")}
print(json.dumps({"code": code, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, **heavy}))
"""

LITELLM = "import resource, litellm; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"


def replies() -> list[str]:
    """The scripted model's replies: the research-0 scenario with a Validate Submission step."""
    sys.path.insert(0, str(REPO / "tests" / "reports"))
    from scenarios import SCENARIOS

    scripted = next(s for s in SCENARIOS if s.name == "research-0").replies()
    validate = scripted[1].replace("Action: Execute Script", "Action: Validate Submission") \
        .replace('Action Input: {"script_name": "blend.py"}', "Action Input: {}")
    return scripted[:2] + ([validate] if validate != scripted[1] else []) + scripted[2:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="one run only, which also prepares its data: checks the benchmark runs")
    quick = parser.parse_args().quick
    sys.path.insert(0, str(REPO / "tests" / "reports"))
    from scenarios import write_task

    with tempfile.TemporaryDirectory(prefix="mlab-bench-memory-") as scratch:
        root = Path(scratch)
        source = write_task(root / "task")
        script = root / "replies.json"
        script.write_text(json.dumps(replies()))
        env = {**os.environ, "MLAB_CACHE": str(root / "cache"), "SCIKIT_LEARN_DATA": str(root / "sklearn"),
               "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        figures = []
        for attempt in ("measured",) if quick else ("prepare", "measured"):
            done = subprocess.run([sys.executable, "-c", RUN, str(REPO / "tests" / "reports"), str(source), str(script),
                                   str(root / attempt)], capture_output=True, text=True, env=env)
            if done.returncode:
                sys.exit(f"the benchmark run failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
            figures.append(json.loads(done.stdout.strip().splitlines()[-1]))
        alone = float(subprocess.run([sys.executable, "-c", LITELLM], capture_output=True, text=True, env=env,
                                     check=True).stdout)
    first, measured = figures[0], figures[-1]
    print(f"harness process of one run: peak {measured['peak_mb']:.0f} MB (target <= {TARGET_MB} MB); "
          f"the run that also prepared the data: {first['peak_mb']:.0f} MB")
    print("imported: " + ", ".join(f"{name} {'yes' if measured[name] else 'no'}"
                                   for name in ("pandas", "sklearn", "numpy", "litellm"))
          + " (target: no pandas, no sklearn)")
    print(f"for scale: a process importing litellm alone peaks at {alone:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
