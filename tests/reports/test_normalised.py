"""Normalised scores, medals, AUP and paired comparisons against values worked out by hand."""
from __future__ import annotations

import pandas as pd
import pytest

from mlab.reports import aup, medals, normalised, paired


def rows(*runs) -> pd.DataFrame:
    """Evaluation rows: (task, agent, seed, final score, baseline, direction)."""
    return pd.DataFrame([{"task": t, "agent": a, "model": "m", "data_variant": "lite", "seed": s,
                          "final_score": score, "baseline": base, "direction": direction, "task_error": False}
                         for t, a, s, score, base, direction in runs])


HIGHER, LOWER = "higher_is_better", "lower_is_better"


def test_re_bench_normalised_score_puts_the_start_at_0_and_the_reference_at_1():
    assert normalised.normalised_score(0.5, 0.5, 0.9) == 0.0
    assert normalised.normalised_score(0.9, 0.5, 0.9) == pytest.approx(1.0)
    assert normalised.normalised_score(0.7, 0.5, 0.9) == pytest.approx(0.5)
    # lower is better: start 10, reference 2; a loss of 4 is three quarters of the way
    assert normalised.normalised_score(4.0, 10.0, 2.0) == pytest.approx(0.75)
    assert normalised.normalised_score(12.0, 10.0, 2.0) == pytest.approx(-0.25)
    # no valid submission: the starting solution is what is left
    assert normalised.normalised_score(None, 10.0, 2.0) == 0.0
    # undefined without a start, or with a reference equal to it
    assert normalised.normalised_score(1.0, None, 2.0) is None
    assert normalised.normalised_score(1.0, 2.0, 2.0) is None


def test_mlrc_share_of_the_gap_closed_is_a_percentage_of_the_human_gain():
    assert normalised.gap_closed(0.62, 0.60, 0.70) == pytest.approx(20.0)
    assert normalised.gap_closed(0.80, 0.60, 0.70) == pytest.approx(200.0)


def test_three_runs_per_task_and_pooled_with_intervals():
    frame = rows(("a", "x", 0, 0.7, 0.5, HIGHER), ("a", "x", 1, 0.9, 0.5, HIGHER), ("a", "x", 2, None, 0.5, HIGHER),
                 ("b", "x", 0, 4.0, 10.0, LOWER))
    refs = {"a": {"reference": 0.9, "best_human": 1.3}, "b": {"reference": 2.0}}
    scored = normalised.normalised_frame(frame, refs)
    assert scored["normalised"].tolist() == pytest.approx([0.5, 1.0, 0.0, 0.75])
    assert scored["gap_closed"].tolist() == pytest.approx([25.0, 50.0, 0.0, 75.0])
    table = normalised.per_task(scored).set_index("task")
    assert table.loc["a", "normalised"] == pytest.approx(0.5)
    assert table.loc["a", "runs"] == 3
    assert 0.0 <= table.loc["a", "normalised_low"] <= 0.5 <= table.loc["a", "normalised_high"] <= 1.0
    pool = normalised.pooled(scored)
    assert pool["normalised"].iloc[0] == pytest.approx((0.5 + 0.75) / 2)
    assert pool["tasks"].iloc[0] == 2


def test_a_task_without_a_reference_gets_no_normalised_score():
    scored = normalised.normalised_frame(rows(("c", "x", 0, 0.7, 0.5, HIGHER)), {})
    assert scored["normalised"].isna().all()
    assert normalised.per_task(scored).empty


def test_medals_follow_the_direction_of_the_metric():
    up = {"gold": 0.9, "silver": 0.8, "bronze": 0.7}
    assert [medals.medal(s, up, False) for s in (0.95, 0.9, 0.85, 0.7, 0.69, None)] == \
        ["gold", "gold", "silver", "bronze", None, None]
    down = {"gold": 0.1, "silver": 0.2, "bronze": 0.3}
    assert [medals.medal(s, down, True) for s in (0.05, 0.2, 0.3, 0.31)] == ["gold", "silver", "bronze", None]


def test_percentile_against_a_leaderboard():
    board = [0.5, 0.6, 0.7, 0.8]
    assert medals.percentile(0.75, board, False) == pytest.approx(75.0)
    assert medals.percentile(0.7, board, False) == pytest.approx(62.5)  # a tie counts half
    assert medals.percentile(0.55, board, True) == pytest.approx(75.0)


def test_medal_rates_per_task_and_pooled():
    frame = rows(("a", "x", 0, 0.95, 0.5, HIGHER), ("a", "x", 1, 0.75, 0.5, HIGHER), ("a", "x", 2, 0.6, 0.5, HIGHER),
                 ("b", "x", 0, 0.5, 1.0, LOWER), ("c", "x", 0, 0.99, 0.5, HIGHER))
    refs = {"a": {"thresholds": {"gold": 0.9, "silver": 0.8, "bronze": 0.7}}, "b": {"thresholds": {"bronze": 0.6}}}
    won = medals.medal_frame(frame, refs)
    assert won["task"].tolist() == ["a", "a", "a", "b"]  # c has no thresholds
    assert won["medal"].tolist() == ["gold", "bronze", "", "bronze"]
    table = medals.per_task(won).set_index("task")
    assert table.loc["a", "any_medal"] == pytest.approx(2 / 3)
    assert (table.loc["a", "gold"], table.loc["a", "silver"], table.loc["a", "bronze"]) == (1, 0, 1)
    assert medals.pooled(won)["any_medal"].iloc[0] == pytest.approx((2 / 3 + 1) / 2)


def test_aup_on_a_profile_worked_out_by_hand():
    # ratios: t1 A 1, B 2; t2 A 2, B 1; t3 A 1, B failed -> tau_max = 1.01 * 2 = 2.02
    frame = rows(("t1", "A", 0, 0.8, 0.1, HIGHER), ("t1", "B", 0, 0.4, 0.1, HIGHER),
                 ("t2", "A", 0, 2.0, 9.0, LOWER), ("t2", "B", 0, 1.0, 9.0, LOWER),
                 ("t3", "A", 0, 0.9, 0.1, HIGHER), ("t3", "B", 0, None, 0.1, HIGHER))
    table = aup.aup_table(frame, resamples=50).set_index("agent")
    assert table.loc["A", "aup"] == pytest.approx((1.02 + 0.02 + 1.02) / 3)
    assert table.loc["B", "aup"] == pytest.approx((0.02 + 1.02 + 0.0) / 3)
    assert table.loc["A", "tasks"] == 3
    # one seed each: every resample is the same, so the interval is the point
    assert table.loc["A", "aup_low"] == pytest.approx(table.loc["A", "aup"])


def test_aup_profile_and_a_task_that_cannot_have_ratios():
    import numpy as np
    means = np.array([[0.8, 0.4], [0.5, 1.0]])
    rho = aup.profile(means, np.array([False, False]), np.array([1.0, 1.5, 2.0]))
    assert rho.tolist() == [[0.5, 0.5, 1.0], [0.5, 0.5, 1.0]]
    frame = rows(("t1", "A", 0, 0.8, 0.1, HIGHER), ("t1", "B", 0, 0.4, 0.1, HIGHER),
                 ("neg", "A", 0, -1.0, 0.1, HIGHER), ("neg", "B", 0, 0.5, 0.1, HIGHER))
    table = aup.aup_table(frame, resamples=10)
    assert set(table["tasks"]) == {1} and set(table["tasks_left_out"]) == {"neg"}


def test_paired_comparison_uses_only_shared_seeds():
    frame = pd.DataFrame([{"task": "a", "agent": agent, "model": "m", "data_variant": "lite", "seed": seed,
                           "normalised": value}
                          for agent, seed, value in [("A", 0, 0.5), ("A", 1, 0.9), ("A", 2, 0.1),
                                                     ("B", 0, 0.3), ("B", 1, 1.0), ("B", 3, 0.9)]])
    table = paired.paired_table(frame)
    assert len(table) == 1
    row = table.iloc[0]
    assert (row["first"], row["second"], row["pairs"]) == ("A / m", "B / m", 2)
    assert row["difference"] == pytest.approx((0.2 - 0.1) / 2)
    assert (row["first_wins"], row["second_wins"]) == (1, 1)
    assert row["difference_low"] == pytest.approx(-0.1) and row["difference_high"] == pytest.approx(0.2)
