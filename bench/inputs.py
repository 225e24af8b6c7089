"""Benchmark of the checks that hostile inputs go through: their time must grow with the input's
size, no faster.

Two checks an agent's output reaches, each on an input of N and of 8N units:

- the submission check (mlab.scoring.submission.load_and_validate) of a submission whose N ids are
  all wrong, against N answers: it names the missing and the unknown ids;
- the tree-search operator's reply parser (mlab.search.operators.parse_operator_reply) on a reply
  of one ```python fence followed by N lines that each open another, never closed.

Printed for each: the best of 3 CPU times at N and at 8N, and their ratio. A check linear in its
input gives about 8, a quadratic one about 64. Target: at most 24 (three times linear, the room
that a loaded machine's noise and the allocator need). No time is asserted in the tests; the
tests only check what the two checks say.

    python bench/inputs.py [--ids 50000] [--fences 10000] [--quick]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

TARGET = 24.0
GROWTH = 8


def best_cpu_seconds(function, *args, repeat: int = 3) -> float:
    """The least CPU time of `repeat` calls of function(*args); an error it raises is its answer."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        try:
            function(*args)
        except Exception:  # noqa: BLE001 - a refusal is the check's result, timed like any
            pass
        best = min(best, time.process_time() - started)
    return best


def submission_check(folder: Path, ids: int) -> tuple[Path, Path]:
    """A submission of `ids` ids, none of them a test id, and the answers of `ids` others."""
    answers = folder / f"answers-{ids}.csv"
    answers.write_text("Id,y\n" + "".join(f"{i},1\n" for i in range(ids)))
    submission = folder / f"submission-{ids}.csv"
    submission.write_text("Id,y\n" + "".join(f"x{i},1\n" for i in range(ids)))
    return submission, answers


def unclosed_fences(lines: int) -> str:
    return "```python\n" + "```py fence\n" * lines


def row(name: str, small: float, large: float, size: int) -> float:
    ratio = large / max(small, 1e-6)
    print(f"{name}: {size:,} units {small * 1000:.1f} ms, {GROWTH * size:,} units {large * 1000:.1f} ms, "
          f"ratio {ratio:.1f} (linear {GROWTH}, quadratic {GROWTH ** 2}; target <= {TARGET:g})")
    return ratio


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ids", type=int, default=50_000, help="ids of the smaller submission")
    parser.add_argument("--fences", type=int, default=10_000, help="unclosed fences of the smaller reply")
    parser.add_argument("--quick", action="store_true", help="small inputs, one try: checks the script runs")
    args = parser.parse_args(argv)
    ids, fences, repeat = (2_000, 1_000, 1) if args.quick else (args.ids, args.fences, 3)

    from mlab.scoring.submission import load_and_validate
    from mlab.search.operators import parse_operator_reply

    ratios = []
    with tempfile.TemporaryDirectory() as folder:
        times = []
        for size in (ids, GROWTH * ids):
            submission, answers = submission_check(Path(folder), size)
            times.append(best_cpu_seconds(load_and_validate, submission, answers, "Id", ["y"], "mae", repeat=repeat))
        ratios.append(row("submission check, every id wrong", *times, ids))
    times = [best_cpu_seconds(parse_operator_reply, unclosed_fences(size), repeat=repeat) for size in (fences, GROWTH * fences)]
    ratios.append(row("operator reply, unclosed fences", *times, fences))
    print(f"worst ratio {max(ratios):.1f} ({'met' if max(ratios) <= TARGET else 'MISSED'}: target <= {TARGET:g})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
