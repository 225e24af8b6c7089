"""Benchmark of `mlab report` and `mlab view RUNS_DIR` at scale: N run folders sharing one build.

One real run of a tiny task is made with `mlab run` (the offline scripted model: write a
script, run it, submit) and scored step by step with `mlab eval --intermediate`; its folder is
then copied N times (a new id and seed each, the same build digest; the workspace and objects
are left out, as the report and the index never read them). `mlab report` and the index of
`mlab view` are timed in-process for 10, 100 and 1,000 runs (CPU time of this process).

Printed per command: the time at each size and the marginal cost per run, between 10 and 100
runs ((t100 - t10) / 90) and between 100 and 1,000 ((t1000 - t100) / 900). Targets: at most
2 ms per run between 100 and 1,000 for `mlab report`, and within 1.2x of its marginal cost
between 10 and 100 (the cost of a run does not grow with the number of runs).

    python bench/report.py [--sizes 10,100,1000] [--view]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "reports"))

from report_helpers import environment, mlab  # noqa: E402
from scenarios import SCENARIOS, write_task  # noqa: E402

TARGET_MS = 2.0
TARGET_RATIO = 1.2
_LEFT_OUT = ("workspace", "objects", "private", "output", "view.html")


def make_run(folder: Path) -> Path:
    """One finished, scored run folder of the tiny task; returns its path."""
    source = write_task(folder / "task")
    scenario = next(s for s in SCENARIOS if s.name == "research-0")
    replies = folder / "replies.json"
    replies.write_text(json.dumps(scenario.replies()))
    runs = folder / "one"
    with environment(MLAB_CACHE=str(folder / "cache"), SCIKIT_LEARN_DATA=str(folder / "sklearn")):
        code, out, err = mlab("run", source, "--agent", "research", "--model", f"mlab/scripted:{replies}",
                              "--runs-dir", runs, "--plain")
        if code != 0:
            sys.exit(f"the benchmark run failed:\n{out}\n{err}")
        code, out, err = mlab("eval", "--intermediate", runs)
        if code != 0:
            sys.exit(f"scoring the benchmark run failed:\n{out}\n{err}")
    (run,) = [p for p in runs.iterdir() if (p / "run.json").is_file()]
    return run


def copy_runs(template: Path, count: int, into: Path) -> Path:
    """`count` copies of `template` under `into`, each with its own id and seed."""
    meta = json.loads((template / "run.json").read_text())
    for number in range(count):
        run_id = f"{meta['id'][:-6]}{number:06x}"
        target = into / run_id
        shutil.copytree(template, target, ignore=lambda _, names: [n for n in names if n in _LEFT_OUT])
        (target / "run.json").write_text(json.dumps({**meta, "id": run_id, "seed": number}))
    return into


def timed(action) -> float:
    start = time.process_time()
    action()
    return time.process_time() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000", help="run counts, smallest first (default 10,100,1000)")
    parser.add_argument("--view", action="store_true", help="time the index of `mlab view RUNS_DIR` too")
    options = parser.parse_args()
    sizes = [int(s) for s in options.sizes.split(",")]
    from mlab.reports.render import write_report
    from mlab.viewer.index import write_index

    with tempfile.TemporaryDirectory(prefix="mlab-bench-report-") as scratch:
        root = Path(scratch)
        template = make_run(root)
        commands = {"mlab report": lambda runs: write_report(runs, runs / "report")}
        if options.view:
            commands["mlab view RUNS_DIR"] = lambda runs: write_index(runs, runs / "index.html")
        folders = {n: copy_runs(template, n, root / f"runs-{n}") for n in sizes}
        write_report(folders[sizes[0]], root / "warm-up")  # imports and first-use costs, untimed
        verdict = 0
        for name, command in commands.items():
            times = {n: timed(lambda: command(folders[n])) for n in sizes}
            print(f"{name}: " + ", ".join(f"{n} runs {t:.2f} s" for n, t in times.items()))
            marginal = []
            for small, large in zip(sizes, sizes[1:]):
                per_run = (times[large] - times[small]) / (large - small) * 1000
                marginal.append(per_run)
                print(f"  marginal cost {small} -> {large} runs: {per_run:.2f} ms per run")
            if name == "mlab report" and len(marginal) >= 2:
                ratio = marginal[-1] / marginal[-2] if marginal[-2] > 0 else float("inf")
                good = marginal[-1] <= TARGET_MS and ratio <= TARGET_RATIO
                print(f"  target: <= {TARGET_MS} ms per run and <= {TARGET_RATIO}x the smaller interval's "
                      f"({ratio:.2f}x): {'met' if good else 'MISSED'}")
                verdict = verdict or (0 if good else 1)
    return verdict


if __name__ == "__main__":
    sys.exit(main())
