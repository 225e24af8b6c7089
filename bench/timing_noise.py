"""Benchmark of the timed metric's success rule: how often noise passes for a 10% speed-up.

Two programs are timed side by side in mlab's scoring sandbox the way a timed task's
evaluation times them (mlab.timed: rounds of one run each, the order alternating), while
background processes keep the CPUs busy. Each trial is one evaluation; its timings are judged
by two rules:

- medians: the submission's median time is at least 10% below the starter's;
- every round (mlab's rule): that, and each round's own speed-up reaches 10% too.

Printed for an A/A pair (the starter against an identical copy: every success is a false one)
and for an A/B pair whose second program does two thirds of the work (a true speed-up of about
1.5x: every failure is a missed one). Target: the every-round rule's false successes at or
below 2**-rounds of the trials, with no more than a few points of power lost on the true
speed-up. No timing is asserted in the tests; this is where the rule is measured.

    python bench/timing_noise.py [--trials 40] [--rounds 5] [--load 2] [--work 0.15]
"""
from __future__ import annotations

import argparse
import multiprocessing
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
THRESHOLD = 0.10

PROGRAM = """
import time
total = 0
for i in range({iterations}):
    total += i * i % 7
open("output.txt", "w").write("done\\n")
"""


def burn(stop_at: float) -> None:
    """A background process that keeps one CPU busy until stop_at."""
    x = 0
    while time.time() < stop_at:
        x = (x * 31 + 7) % 1000003


def calibrate(seconds: float) -> int:
    """Loop iterations that take about `seconds` in this interpreter on an idle CPU."""
    iterations = 200_000
    while True:
        start = time.perf_counter()
        total = 0
        for i in range(iterations):
            total += i * i % 7
        took = time.perf_counter() - start
        if took > 0.05:
            return max(1, int(iterations * seconds / took))
        iterations *= 4


def folder_with(root: Path, name: str, iterations: int) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "train.py").write_text(PROGRAM.format(iterations=iterations))
    return folder


def one_trial(settings, starter: Path, candidate: Path, rounds: int) -> tuple[list[float], list[float]]:
    """One evaluation's timings, in mlab.timed's order (round 1 starter first, then alternating)."""
    times: dict[str, list[float]] = {"starter": [], "candidate": []}

    def time_one(which: str, folder: Path) -> None:
        result = settings.run(folder, ["train.py"])
        if result.exit_code != 0:
            raise SystemExit(f"the benchmark program failed: {result.killed_reason or result.output[-300:]}")
        times[which].append(max(result.wall_s, 1e-6))

    for number in range(1, rounds + 1):
        order = [("starter", starter), ("candidate", candidate)]
        for which, folder in order if number % 2 == 1 else order[::-1]:
            time_one(which, folder)
    return times["starter"], times["candidate"]


def judge(starter: list[float], candidate: list[float]) -> tuple[bool, bool]:
    """(success by the medians, success by mlab's every-round rule) of one trial."""
    from mlab.evaluate import timed_success
    from mlab.metrics import improvement, is_success, timed_score

    timing = timed_score(starter, candidate)
    gain = improvement(timing["score"], timing["baseline"], "lower_is_better")
    by_medians = is_success(gain, THRESHOLD)
    return by_medians, by_medians and timed_success({"improvement_floor": timing["improvement_floor"]}, THRESHOLD)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40, help="evaluations per pair (default 40)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per evaluation (default 5, as mlab.timed)")
    parser.add_argument("--load", type=int, default=2, help="background busy processes (default 2)")
    parser.add_argument("--work", type=float, default=0.15, help="seconds of work of the starter (default 0.15)")
    args = parser.parse_args()

    from mlab.scripts import ScriptSettings

    iterations = calibrate(args.work)
    root = Path(tempfile.mkdtemp(prefix="mlab-bench-timing-"))
    stop_at = time.time() + 24 * 3600
    burners = [multiprocessing.Process(target=burn, args=(stop_at,), daemon=True) for _ in range(args.load)]
    for process in burners:
        process.start()
    try:
        settings = ScriptSettings(timeout_s=60.0)
        starter = folder_with(root, "starter", iterations)
        pairs = {"A/A (identical programs)": folder_with(root, "same", iterations),
                 "A/B (true speed-up ~1.5x)": folder_with(root, "faster", iterations * 2 // 3)}
        print(f"{args.trials} evaluations per pair, {args.rounds} rounds each, {args.load} busy background "
              f"processes, starter ~{args.work:.2f} s idle; threshold {THRESHOLD:.0%}")
        print(f"{'pair':28} {'medians rule':>14} {'every-round rule':>18}   spread of A/A speed-ups")
        for label, candidate in pairs.items():
            medians = every = 0
            ratios: list[float] = []
            for _ in range(args.trials):
                starter_s, candidate_s = one_trial(settings, starter, candidate, args.rounds)
                by_medians, by_rounds = judge(starter_s, candidate_s)
                medians += by_medians
                every += by_rounds
                ratios += [s / c for s, c in zip(starter_s, candidate_s)]
            spread = f"{min(ratios):.2f}-{max(ratios):.2f}" if label.startswith("A/A") else ""
            print(f"{label:28} {medians:>6}/{args.trials} succ. {every:>8}/{args.trials} succ.   {spread}")
        print(f"bound of the every-round rule for a program below the threshold: 2^-{args.rounds} = "
              f"{2 ** -args.rounds:.3f} of the evaluations")
    finally:
        for process in burners:
            process.terminate()
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
