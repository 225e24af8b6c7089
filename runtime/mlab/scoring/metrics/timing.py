"""The timed metric's score: medians and speed-up of paired rounds, and the sign test that tells a
speed-up from timing noise."""
from __future__ import annotations

import math
from statistics import median
from typing import Sequence

from mlab.scoring.metrics.values import LOWER_IS_BETTER, MetricError
from mlab.scoring.metrics.tabular import improvement, is_success


def timed_score(baseline_times: Sequence[float], candidate_times: Sequence[float]) -> dict:
    """Medians of the two programs' wall times (seconds), the speed-up, and each round's own.

    The score of the timed metric is the candidate's median (lower is better), the baseline
    is the starter's median, so `improvement` gives 1 - 1/speedup. When the two were timed
    in rounds (one run of each per round, equally many), `paired_speedups` holds each round's
    baseline/candidate and `speedup_floor` the smallest of them; `timed_rounds_succeed` judges
    whether those rounds show the speed-up beyond timing noise.
    """
    medians = {}
    for times, what in ((baseline_times, "baseline"), (candidate_times, "candidate")):
        values = list(times)
        if not values:
            raise MetricError(f"no {what} timings were recorded")
        if not all(isinstance(t, (int, float)) and math.isfinite(t) and t > 0 for t in values):
            raise MetricError(f"the {what} timings must be positive numbers of seconds, got {values}")
        medians[what] = float(median(values))
    baseline, candidate = medians["baseline"], medians["candidate"]
    result = {"baseline_median": baseline, "candidate_median": candidate, "speedup": baseline / candidate,
              "baseline_runs": len(baseline_times), "candidate_runs": len(candidate_times),
              "score": candidate, "baseline": baseline}
    if len(baseline_times) == len(candidate_times):
        paired = [float(b) / float(c) for b, c in zip(baseline_times, candidate_times)]
        result.update(paired_speedups=paired, speedup_floor=min(paired))
    return result


# A sign test on the rounds: with the true speed-up below the threshold, a round clears it with
# probability at most 1/2, so needing k of n rounds bounds a false success by P(Binom(n, 1/2) >= k).
SIGN_TEST_LEVEL = 0.035


def rounds_required(rounds: int) -> int:
    """How many of `rounds` paired rounds must clear the threshold: the sign test's critical count
    at SIGN_TEST_LEVEL (5 of 5, 12 of 15), or every round when so few cannot reach that level."""
    for needed in range(rounds + 1):
        tail = sum(math.comb(rounds, k) for k in range(needed, rounds + 1)) / 2 ** rounds
        if tail <= SIGN_TEST_LEVEL:
            return needed
    return rounds


def rounds_clearing(paired_speedups: Sequence[float], threshold: float) -> int:
    """How many rounds' own speed-up reaches the improvement threshold (0.1: 1/0.9 times faster)."""
    return sum(is_success(1.0 - 1.0 / float(r), threshold) for r in paired_speedups)


def timed_rounds_succeed(paired_speedups: Sequence[float] | None, threshold: float) -> bool:
    """Whether enough rounds clear the threshold for the speed-up to be more than timing noise.

    The medians alone let noise pass for a speed-up: on a busy machine an unchanged starter
    once timed 10% faster than itself. None (a score not timed in rounds: untimed metrics)
    passes unchanged.
    """
    if paired_speedups is None:
        return True
    return rounds_clearing(paired_speedups, threshold) >= rounds_required(len(paired_speedups))


def needs_more_rounds(baseline_times: Sequence[float], candidate_times: Sequence[float], threshold: float) -> bool:
    """The medians reach the threshold but too few rounds do: time more rounds before deciding.

    With five rounds, every round must clear the threshold; on a busy machine one slow round
    can hide a real speed-up, so such a split verdict earns more rounds (mlab.scoring.timed: ten) and
    the sign test over all of them decides. Both stages together keep a false success below
    1/32 + P(Binom(15, 1/2) >= 12), under 5%.
    """
    timing = timed_score(baseline_times, candidate_times)
    by_medians = is_success(improvement(timing["score"], timing["baseline"], LOWER_IS_BETTER), threshold)
    return by_medians and not timed_rounds_succeed(timing.get("paired_speedups"), threshold)
