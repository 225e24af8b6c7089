"""Benchmark of the timed metric's success rule: how often noise passes for a 10% speed-up.

Two programs are timed side by side in mlab's scoring sandbox the way a timed task's
evaluation times them (mlab.scoring.timed: rounds of one run each, the order alternating, ten more
rounds for a split verdict), while background processes keep the CPUs busy. Each trial is one
evaluation; its timings are judged by two rules:

- medians: the submission's median time over five rounds is at least 10% below the starter's;
- sign test (mlab's rule): the medians, and enough rounds whose own speed-up reaches 10%
  (all of five; 12 of 15 once extended).

Printed for an A/A pair (the starter against an identical copy: every success is a false one)
and for an A/B pair whose second program does two thirds of the work (a true speed-up of about
1.5x: every failure is a missed one), with how many evaluations needed the extra rounds.
Targets: false successes of the sign-test rule under 5% of the trials, and most true speed-ups
found. No timing is asserted in the tests; this is where the rule is measured.

    python bench/timing_noise.py [--trials 40] [--rounds 5] [--extra 10] [--load 2] [--work 0.15]
"""
from __future__ import annotations

import argparse
import multiprocessing
import shutil
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


def one_trial(settings, starter: Path, candidate: Path, rounds: int, extra: int) -> tuple[list[float], list[float]]:
    """One evaluation's timings, as mlab.scoring.timed takes them: `rounds` rounds (round 1 starter first,
    then alternating), and `extra` more when the medians clear the threshold but too few rounds do."""
    from mlab.scoring.metrics.timing import needs_more_rounds
    from mlab.scoring.timed import round_order

    folders = {"starter": starter, "submission": candidate}
    times: dict[str, list[float]] = {"starter": [], "submission": []}

    def time_rounds(first: int, last: int) -> None:
        for number in range(first, last + 1):
            for which in round_order(number):
                result = settings.run(folders[which], ["train.py"])
                if result.exit_code != 0:
                    raise SystemExit(f"the benchmark program failed: {result.killed_reason or result.output[-300:]}")
                times[which].append(max(result.wall_s, 1e-6))

    time_rounds(1, rounds)
    if needs_more_rounds(times["starter"], times["submission"], THRESHOLD):
        time_rounds(rounds + 1, rounds + extra)
    return times["starter"], times["submission"]


def judge(starter: list[float], candidate: list[float], rounds: int) -> tuple[bool, bool]:
    """(success by the medians of the first `rounds` rounds, success by mlab's rule) of one trial."""
    from mlab.scoring.metrics.tabular import improvement, is_success
    from mlab.scoring.metrics.timing import timed_rounds_succeed, timed_score

    def by_medians(timing: dict) -> bool:
        return is_success(improvement(timing["score"], timing["baseline"], "lower_is_better"), THRESHOLD)

    first = timed_score(starter[:rounds], candidate[:rounds])
    every = timed_score(starter, candidate)
    return by_medians(first), by_medians(every) and timed_rounds_succeed(every["paired_speedups"], THRESHOLD)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40, help="evaluations per pair (default 40)")
    parser.add_argument("--rounds", type=int, default=5,
                        help="rounds per evaluation (default 5, as mlab.scoring.timed)")
    parser.add_argument("--extra", type=int, default=10,
                        help="rounds added to a split verdict (default 10, as mlab.scoring.timed)")
    parser.add_argument("--load", type=int, default=2, help="background busy processes (default 2)")
    parser.add_argument("--work", type=float, default=0.15, help="seconds of work of the starter (default 0.15)")
    parser.add_argument("--quick", action="store_true", help="2 evaluations of short programs, no load: checks the benchmark runs")
    args = parser.parse_args()
    if args.quick:
        args.trials, args.rounds, args.extra, args.load, args.work = 2, 3, 2, 0, 0.02

    from mlab.actions.scripts import ScriptSettings

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
        print(f"{'pair':28} {'medians rule':>14} {'sign-test rule':>16} {'extended':>9}   spread of A/A speed-ups")
        for label, candidate in pairs.items():
            medians = every = extended = 0
            ratios: list[float] = []
            for _ in range(args.trials):
                starter_s, candidate_s = one_trial(settings, starter, candidate, args.rounds, args.extra)
                by_medians, by_rounds = judge(starter_s, candidate_s, args.rounds)
                extended += len(starter_s) > args.rounds
                medians += by_medians
                every += by_rounds
                ratios += [s / c for s, c in zip(starter_s, candidate_s)]
            spread = f"{min(ratios):.2f}-{max(ratios):.2f}" if label.startswith("A/A") else ""
            print(f"{label:28} {medians:>6}/{args.trials} succ. {every:>8}/{args.trials} succ. "
                  f"{extended:>5}/{args.trials}   {spread}")
        print("false successes of the sign-test rule are bounded by 1/32 + P(Binom(15, 1/2) >= 12) < 0.05")
    finally:
        for process in burners:
            process.terminate()
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
