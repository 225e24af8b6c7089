"""The metric catalogue: every metric against values computed independently in the test."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mlab.scoring.metrics import tabular as metrics
from mlab.scoring.metrics.learned import average_precision_at_k
from mlab.scoring.metrics.outputs import compare_outputs
from mlab.scoring.metrics.tabular import improvement, is_success, score
from mlab.scoring.metrics.timing import timed_score
from mlab.scoring.metrics.values import MetricError

SPEC = Path(__file__).resolve().parents[2] / "spec" / "metrics.json"


@pytest.fixture(autouse=True)
def _sklearn_data_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("SCIKIT_LEARN_DATA", str(tmp_path / "sklearn_data"))


def frame(**columns) -> pd.DataFrame:
    return pd.DataFrame(columns)


# --- the registry follows spec/metrics.json ------------------------------------------

def test_registry_has_exactly_the_catalogue_names_directions_and_kinds():
    catalogue = json.loads(SPEC.read_text())["metrics"]
    assert set(metrics.METRICS) == set(catalogue)
    for name, entry in catalogue.items():
        metric = metrics.METRICS[name]
        assert (metric.direction, metric.kind, metric.columns) == \
            (entry["direction"], entry["kind"], entry["columns"]), name
        assert dict(metric.parameters) == {k: v["default"] for k, v in entry.get("parameters", {}).items()}, name


def test_unknown_metric_names_the_known_ones():
    with pytest.raises(MetricError, match=r"unknown metric `f2`.*accuracy.*mae"):
        metrics.get_metric("f2")


@pytest.mark.parametrize("name", ["perplexity", "custom"])
def test_evaluator_metrics_refuse_to_score_without_an_evaluator(name):
    with pytest.raises(MetricError, match=rf"`{name}` is computed by the task's evaluator.*none was given"):
        score(name, frame(y=[1]), frame(y=[1]), [])


def test_timed_metric_is_not_scored_from_a_table():
    with pytest.raises(MetricError, match="timed in the sandbox; use compare_outputs and timed_score"):
        score("runtime", frame(y=[1]), frame(y=[1]), ["y"])


def test_a_one_column_metric_refuses_two_columns():
    with pytest.raises(MetricError, match=r"`mae` scores exactly one column, got \['a', 'b'\]"):
        score("mae", frame(a=[1], b=[2]), frame(a=[1], b=[2]), ["a", "b"])


def test_unaligned_frames_are_refused():
    with pytest.raises(MetricError, match="submission has 1 rows but the answers have 2"):
        score("mae", frame(y=[1, 2]), frame(y=[1]), ["y"])


# --- tabular metrics on hand-computed examples ---------------------------------------

def test_accuracy_counts_equal_labels():
    answers = frame(label=["cat", "dog", "cat", "bird"])
    submission = frame(label=["cat", "cat", "cat", "bird"])
    assert score("accuracy", answers, submission, ["label"]) == 0.75


def test_accuracy_treats_spellings_of_one_label_as_equal():
    answers = frame(label=[1, 0, True, "False", "7"])
    submission = frame(label=["1.0", " 0 ", "true", False, "7.0"])
    assert score("accuracy", answers, submission, ["label"]) == 1.0
    assert score("accuracy", frame(label=["Cat"]), frame(label=["cat"]), ["label"]) == 0.0


def test_mae_and_rmse_match_a_plain_loop():
    truth, predicted = [3.0, -1.0, 2.5, 7.0], [2.0, 1.0, 2.5, 10.0]
    abs_errors = [abs(t - p) for t, p in zip(truth, predicted)]
    squared = [(t - p) ** 2 for t, p in zip(truth, predicted)]
    answers, submission = frame(y=truth), frame(y=predicted)
    assert score("mae", answers, submission, ["y"]) == pytest.approx(sum(abs_errors) / 4)  # 1.5
    assert score("mae", answers, submission, ["y"]) == pytest.approx(1.5)
    assert score("rmse", answers, submission, ["y"]) == pytest.approx(math.sqrt(sum(squared) / 4))
    assert score("rmse", answers, submission, ["y"]) == pytest.approx(math.sqrt(14 / 4))


def test_smape1_shifts_by_one_and_counts_zero_when_both_are_zero():
    truth, predicted = [0.0, 3.0, -1.0, 10.0], [1.0, 3.0, -1.0, 0.0]
    terms = []
    for t, p in zip(truth, predicted):
        a, f = t + 1, p + 1
        terms.append(0.0 if a == 0 and f == 0 else abs(f - a) / ((abs(a) + abs(f)) / 2))
    expected = 100 * sum(terms) / len(terms)
    got = score("smape1", frame(y=truth), frame(y=predicted), ["y"])
    assert got == pytest.approx(expected)
    # by hand: (1/1.5 + 0 + 0 + 10/6) / 4 * 100
    assert got == pytest.approx(100 * (2 / 3 + 5 / 3) / 4)


def test_smape1_ranges_from_0_to_200_percent():
    assert score("smape1", frame(y=[4, 9]), frame(y=[4, 9]), ["y"]) == 0.0
    assert score("smape1", frame(y=[0.0]), frame(y=[-2.0]), ["y"]) == pytest.approx(200.0)


def test_rows_without_an_answer_are_not_scored():
    answers = frame(y=[1.0, float("nan"), 3.0])
    submission = frame(y=[2.0, 100.0, 3.0])
    assert score("mae", answers, submission, ["y"]) == pytest.approx(0.5)
    with pytest.raises(MetricError, match="no row of the answers has a numeric value in `y`"):
        score("mae", frame(y=[float("nan")]), frame(y=[1.0]), ["y"])


def test_missing_predictions_are_an_error_not_a_score():
    with pytest.raises(MetricError, match="not finite numbers"):
        score("rmse", frame(y=[1.0, 2.0]), frame(y=[1.0, float("nan")]), ["y"])


def test_mcrmse_is_the_mean_of_column_rmses():
    truth = {"a": [1.0, 2.0, 3.0], "b": [0.0, 0.0, 0.0]}
    predicted = {"a": [1.0, 4.0, 3.0], "b": [3.0, 3.0, 3.0]}
    per_column = []
    for column in ("a", "b"):
        errors = [(t - p) ** 2 for t, p in zip(truth[column], predicted[column])]
        per_column.append(math.sqrt(sum(errors) / len(errors)))
    got = score("mcrmse", pd.DataFrame(truth), pd.DataFrame(predicted), ["a", "b"])
    assert got == pytest.approx(sum(per_column) / 2)
    assert got == pytest.approx((math.sqrt(4 / 3) + 3.0) / 2)


# --- dice ---------------------------------------------------------------------------

def rle_pixels(text) -> set[int]:
    """Pixel positions (1-based) of a run-length encoding, decoded one pixel at a time."""
    pixels: set[int] = set()
    if isinstance(text, str) and text.strip():
        numbers = [int(n) for n in text.split()]
        for start, length in zip(numbers[0::2], numbers[1::2]):
            for offset in range(length):
                pixels.add(start + offset)
    return pixels


def encode_mask(mask: np.ndarray) -> str:
    """Run-length encoding of a 2-D 0/1 mask, row-major, 1-based starts."""
    runs, start = [], None
    flat = list(mask.reshape(-1)) + [0]
    for position, value in enumerate(flat, start=1):
        if value and start is None:
            start = position
        elif not value and start is not None:
            runs += [start, position - start]
            start = None
    return " ".join(map(str, runs))


def test_dice_on_hand_computed_masks():
    answers = frame(mask=["1 4", "", "10 2", "", "5 5"])
    submission = frame(mask=["3 4", "", "", "7 1", "5 5"])
    # rows: 2*2/(4+4) = 0.5; both empty = 1; one empty = 0; one empty = 0; identical = 1
    assert score("dice", answers, submission, ["mask"]) == pytest.approx((0.5 + 1 + 0 + 0 + 1) / 5)


def test_dice_counts_overlapping_runs_once_and_accepts_nan_as_empty():
    answers = frame(mask=["1 6", None])
    submission = frame(mask=["1 3 2 3", float("nan")])   # runs overlap: pixels 1..4
    assert score("dice", answers, submission, ["mask"]) == pytest.approx((2 * 4 / (6 + 4) + 1.0) / 2)


def test_dice_matches_pixel_sets_on_random_masks():
    rng = np.random.default_rng(7)
    truth_masks = [(rng.random((9, 11)) < rng.random()).astype(int) for _ in range(30)]
    predicted_masks = [(rng.random((9, 11)) < rng.random()).astype(int) for _ in range(30)]
    truth_masks[0][:] = 0
    predicted_masks[0][:] = 0
    expected = []
    for t, p in zip(truth_masks, predicted_masks):
        a, b = int(t.sum()), int(p.sum())
        expected.append(1.0 if a + b == 0 else 2 * int((t & p).sum()) / (a + b))
    answers = frame(mask=[encode_mask(m) for m in truth_masks])
    submission = frame(mask=[encode_mask(m) for m in predicted_masks])
    for t_text, mask in zip(answers["mask"], truth_masks):
        assert rle_pixels(t_text) == {i + 1 for i in np.flatnonzero(mask.reshape(-1))}
    assert score("dice", answers, submission, ["mask"]) == pytest.approx(np.mean(expected))


def test_dice_refuses_a_malformed_encoding():
    with pytest.raises(MetricError, match="malformed run-length encoding: 3 numbers"):
        score("dice", frame(mask=["1 2"]), frame(mask=["1 2 3"]), ["mask"])
    with pytest.raises(MetricError, match="starts are 1-based"):
        score("dice", frame(mask=["1 2"]), frame(mask=["0 2"]), ["mask"])


# --- fathomnet ----------------------------------------------------------------------

def pairwise_auc(flags, probabilities) -> float:
    """AUC as the share of (positive, negative) pairs ranked correctly, ties counting half."""
    positives = [p for f, p in zip(flags, probabilities) if f == 1]
    negatives = [p for f, p in zip(flags, probabilities) if f == 0]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def test_average_precision_at_k_by_hand():
    assert average_precision_at_k({"a", "b"}, ["a", "x", "b"]) == pytest.approx((1 + 2 / 3) / 2)
    assert average_precision_at_k({"a"}, ["x", "a"]) == pytest.approx(0.5)
    assert average_precision_at_k({"a"}, ["a", "a", "a"]) == 1.0       # a repeat counts once
    assert average_precision_at_k({"a", "b"}, []) == 0.0
    # 25 true items, the top 20 all right: the denominator is min(20, 25)
    truth = {str(i) for i in range(25)}
    assert average_precision_at_k(truth, [str(i) for i in range(30)]) == 1.0
    # a hit below rank 20 does not count
    assert average_precision_at_k({"z"}, [str(i) for i in range(20)] + ["z"]) == 0.0
    assert average_precision_at_k(set(), []) == 1.0
    assert average_precision_at_k(set(), ["a"]) == 0.0


def test_fathomnet_combines_auc_and_map_at_20():
    answers = frame(categories=["1 2", "3", "4", "5 6 7"], osd=[0, 0, 1, 1])
    submission = frame(categories=["2 9 1", "3", "8 4", "9"], osd=[0.1, 0.4, 0.35, 0.8])
    average_precisions = [(1 / 1 + 2 / 3) / 2, 1.0, 1 / 2, 0.0]
    auc = pairwise_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    assert auc == 0.75
    expected = 0.5 * ((2 * auc - 1) + sum(average_precisions) / 4)
    assert score("fathomnet", answers, submission, ["categories", "osd"]) == pytest.approx(expected)
    # the probability column is found by its name, whatever the order
    assert score("fathomnet", answers, submission, ["osd", "categories"]) == pytest.approx(expected)


def test_fathomnet_with_one_class_counts_auc_as_chance():
    answers = frame(categories=["1", "2"], osd=[0, 0])
    submission = frame(categories=["1", "2"], osd=[0.9, 0.1])
    assert score("fathomnet", answers, submission, ["categories", "osd"]) == pytest.approx(0.5)


def test_fathomnet_is_deterministic_and_checks_its_flags():
    answers = frame(categories=["1", "2", "3"], osd=[1, 0, 1])
    submission = frame(categories=["2 1", "2", ""], osd=[0.5, 0.5, 0.2])
    first = score("fathomnet", answers, submission, ["categories", "osd"])
    assert all(score("fathomnet", answers, submission, ["categories", "osd"]) == first for _ in range(3))
    with pytest.raises(MetricError, match="must hold 0 or 1"):
        score("fathomnet", frame(categories=["1"], osd=[0.3]), frame(categories=["1"], osd=[0.3]),
              ["categories", "osd"])


# --- best and known-bad values ------------------------------------------------------

PERFECT_CASES = {
    "accuracy": (frame(y=["a", "b"]), ["y"], 1.0),
    "mae": (frame(y=[1.5, -2.0]), ["y"], 0.0),
    "rmse": (frame(y=[1.5, -2.0]), ["y"], 0.0),
    "smape1": (frame(y=[0.0, 12.0]), ["y"], 0.0),
    "mcrmse": (frame(a=[1.0, 2.0], b=[3.0, 4.0]), ["a", "b"], 0.0),
    "dice": (frame(m=["1 3 10 2", ""]), ["m"], 1.0),
    "fathomnet": (frame(categories=["1 2", "3"], osd=[0.0, 1.0]), ["categories", "osd"], 1.0),
}


@pytest.mark.parametrize("name", sorted(PERFECT_CASES))
def test_a_perfect_submission_scores_the_best_value(name):
    answers, columns, best = PERFECT_CASES[name]
    assert score(name, answers, answers.copy(), columns) == pytest.approx(best)


def test_known_bad_submissions_score_as_expected():
    assert score("accuracy", frame(y=["a", "b"]), frame(y=["b", "a"]), ["y"]) == 0.0
    assert score("mae", frame(y=[0.0, 0.0]), frame(y=[10.0, -10.0]), ["y"]) == 10.0
    assert score("dice", frame(m=["1 5"]), frame(m=["6 5"]), ["m"]) == 0.0
    # osd ranked backwards (AUC 0) and no category right: the lowest possible score
    answers = frame(categories=["1", "2"], osd=[0, 1])
    assert score("fathomnet", answers, frame(categories=["9", "9"], osd=[0.9, 0.1]),
                 ["categories", "osd"]) == pytest.approx(-0.5)


# --- improvement and success --------------------------------------------------------

def test_improvement_is_positive_when_better_in_both_directions():
    assert improvement(90.0, 100.0, "lower_is_better") == pytest.approx(0.10)
    assert improvement(110.0, 100.0, "lower_is_better") == pytest.approx(-0.10)
    assert improvement(0.88, 0.80, "higher_is_better") == pytest.approx(0.10)
    assert improvement(0.72, 0.80, "higher_is_better") == pytest.approx(-0.10)


def test_improvement_divides_by_the_size_of_a_negative_baseline():
    # e.g. a higher-is-better score below zero: -5 beats -10 by half of |-10|
    assert improvement(-5.0, -10.0, "higher_is_better") == pytest.approx(0.5)
    assert improvement(-5.0, -10.0, "lower_is_better") == pytest.approx(-0.5)


def test_improvement_over_a_zero_baseline_is_the_signed_difference():
    assert improvement(0.3, 0.0, "higher_is_better") == pytest.approx(0.3)
    assert improvement(0.3, 0.0, "lower_is_better") == pytest.approx(-0.3)
    assert improvement(0.0, 0.0, "lower_is_better") == 0.0


def test_improvement_refuses_unknown_directions_and_missing_scores():
    with pytest.raises(MetricError, match="direction must be lower_is_better or higher_is_better"):
        improvement(1.0, 2.0, None)
    with pytest.raises(MetricError, match="the score is nan"):
        improvement(float("nan"), 2.0, "lower_is_better")


def test_success_at_the_threshold_survives_float_rounding():
    gain = improvement(0.63, 0.70, "lower_is_better")   # 0.0999999... in floating point
    assert gain < 0.10
    assert is_success(gain, 0.10)
    assert not is_success(0.0999, 0.10)
    assert not is_success(float("nan"), 0.10)
    assert is_success(0.5, 0.10)


# --- timed metric ------------------------------------------------------------------

def test_timed_score_reports_medians_and_the_speedup():
    result = timed_score([3.0, 1.0, 2.0, 10.0, 2.5], [0.5, 1.0, 0.75])
    assert result["baseline_median"] == 2.5
    assert result["candidate_median"] == 0.75
    assert result["speedup"] == pytest.approx(2.5 / 0.75)
    assert (result["score"], result["baseline"]) == (0.75, 2.5)
    assert improvement(result["score"], result["baseline"], "lower_is_better") == \
        pytest.approx(1 - 1 / result["speedup"])
    assert "speedup_floor" not in result  # unequal counts: no rounds to pair


def test_timed_score_pairs_rounds_and_keeps_the_smallest_speedup():
    result = timed_score([2.0, 2.2, 1.8], [1.0, 1.1, 2.0])
    assert result["paired_speedups"] == pytest.approx([2.0, 2.0, 0.9])
    assert result["speedup"] == pytest.approx(2.0 / 1.1)
    assert result["speedup_floor"] == pytest.approx(0.9)


def test_the_sign_test_asks_every_round_of_five_and_twelve_of_fifteen():
    from math import comb

    from mlab.scoring.metrics.timing import SIGN_TEST_LEVEL, rounds_required

    assert (rounds_required(5), rounds_required(15)) == (5, 12)
    assert [rounds_required(n) for n in (1, 2, 3)] == [1, 2, 3]  # too few rounds: all of them
    for n in (5, 15):  # the needed count is the smallest whose chance under a fair coin is below the level
        tail = [sum(comb(n, j) for j in range(k, n + 1)) / 2 ** n for k in range(n + 1)]
        assert tail[rounds_required(n)] <= SIGN_TEST_LEVEL < tail[rounds_required(n) - 1]


def test_split_verdicts_earn_more_rounds_and_clear_ones_do_not():
    from mlab.scoring.metrics.timing import needs_more_rounds, timed_rounds_succeed

    one_slow = ([1.0] * 5, [0.5, 0.5, 0.5, 0.5, 0.95])
    assert needs_more_rounds(*one_slow, 0.10) and not timed_rounds_succeed(
        timed_score(*one_slow)["paired_speedups"], 0.10)
    assert not needs_more_rounds([1.0] * 5, [0.5] * 5, 0.10)  # every round clears: a success
    assert not needs_more_rounds([1.0] * 5, [0.95] * 5, 0.10)  # the medians fall short: a plain failure
    # exactly 10% faster clears a 10% threshold (float rounding aside)
    assert timed_rounds_succeed([1 / 0.9] * 5, 0.10)


@pytest.mark.parametrize("times, message", [([], "no candidate timings"),
                                            ([0.0], "positive numbers of seconds"),
                                            ([float("nan")], "positive numbers of seconds")])
def test_timed_score_refuses_missing_or_impossible_times(times, message):
    with pytest.raises(MetricError, match=message):
        timed_score([1.0], times)


def test_arrays_match_within_tolerance(tmp_path):
    reference = np.linspace(0, 1, 50).reshape(5, 10)
    np.save(tmp_path / "expected.npy", reference)
    np.save(tmp_path / "close.npy", (reference * (1 + 1e-6)).astype(np.float32))
    np.save(tmp_path / "far.npy", reference + np.eye(5, 10) * 1e-2)
    np.save(tmp_path / "shape.npy", reference.T)
    assert compare_outputs(tmp_path / "expected.npy", tmp_path / "close.npy") == (True, "outputs match")
    ok, reason = compare_outputs(tmp_path / "expected.npy", tmp_path / "far.npy")
    assert not ok and "far.npy differs from the reference at 5 of 50 values" in reason
    ok, reason = compare_outputs(tmp_path / "expected.npy", tmp_path / "shape.npy")
    assert not ok and reason == "shape.npy has shape (10, 5), expected (5, 10)"


def test_missing_or_unreadable_candidates_do_not_match(tmp_path):
    np.save(tmp_path / "expected.npy", np.zeros(3))
    assert compare_outputs(tmp_path / "expected.npy", tmp_path / "output.npy") == \
        (False, "the script did not write output.npy")
    (tmp_path / "output.npy").write_bytes(b"not an array")
    ok, reason = compare_outputs(tmp_path / "expected.npy", tmp_path / "output.npy")
    assert not ok and reason.startswith("the script's output output.npy could not be read")
    with open(tmp_path / "archive.npy", "wb") as handle:   # an .npz archive under an .npy name
        np.savez(handle, a=np.zeros(3))
    ok, reason = compare_outputs(tmp_path / "expected.npy", tmp_path / "archive.npy")
    assert not ok and "could not be read" in reason


def test_npz_archives_compare_array_by_array(tmp_path):
    np.savez(tmp_path / "expected.npz", a=np.arange(4.0), b=np.ones((2, 2)))
    np.savez(tmp_path / "same.npz", b=np.ones((2, 2)), a=np.arange(4.0) + 1e-9)
    np.savez(tmp_path / "keys.npz", a=np.arange(4.0))
    np.savez(tmp_path / "wrong.npz", a=np.arange(4.0), b=np.zeros((2, 2)))
    assert compare_outputs(tmp_path / "expected.npz", tmp_path / "same.npz")[0]
    assert compare_outputs(tmp_path / "expected.npz", tmp_path / "keys.npz") == \
        (False, "keys.npz holds arrays ['a'], expected ['a', 'b']")
    ok, reason = compare_outputs(tmp_path / "expected.npz", tmp_path / "wrong.npz")
    assert not ok and reason.startswith("wrong.npz[b] differs from the reference at 4 of 4 values")


def test_json_outputs_match_exactly_or_with_close_numbers(tmp_path):
    (tmp_path / "expected.json").write_text(json.dumps({"loss": 0.25, "labels": ["a", "b"], "n": 3}))
    (tmp_path / "close.json").write_text(json.dumps({"n": 3.0, "labels": ["a", "b"], "loss": 0.2500000001}))
    (tmp_path / "far.json").write_text(json.dumps({"loss": 0.25, "labels": ["a", "c"], "n": 3}))
    (tmp_path / "broken.json").write_text("{loss: ")
    assert compare_outputs(tmp_path / "expected.json", tmp_path / "close.json") == (True, "outputs match")
    assert compare_outputs(tmp_path / "expected.json", tmp_path / "far.json") == \
        (False, "at $.labels[1]: 'c', expected 'b'")
    ok, reason = compare_outputs(tmp_path / "expected.json", tmp_path / "broken.json")
    assert not ok and "broken.json could not be read: JSONDecodeError" in reason


def test_text_outputs_match_after_trailing_whitespace(tmp_path):
    (tmp_path / "expected.csv").write_text("id,value\n1,0.5\n2,0.25\n")
    (tmp_path / "spaces.csv").write_text("id,value   \r\n1,0.5\t\n2,0.25\n\n\n")
    (tmp_path / "wrong.csv").write_text("id,value\n1,0.5\n2,0.26\n")
    (tmp_path / "short.csv").write_text("id,value\n1,0.5\n")
    assert compare_outputs(tmp_path / "expected.csv", tmp_path / "spaces.csv") == (True, "outputs match")
    assert compare_outputs(tmp_path / "expected.csv", tmp_path / "wrong.csv") == \
        (False, "wrong.csv differs from the reference at line 3")
    assert compare_outputs(tmp_path / "expected.csv", tmp_path / "short.csv") == \
        (False, "short.csv has 2 lines, expected 3")


# --- the scikit-learn metrics: perfect, known-bad and malformed against scikit-learn's own value ----

import sklearn.metrics as skm  # noqa: E402

LABELS = frame(y=["a", "b", "b", "c", "a", "c"])
GUESSED = frame(y=["a", "b", "c", "c", "b", "a"])
FLAGS = frame(y=[0, 1, 1, 0, 1, 0])
ODDS = frame(y=[0.2, 0.7, 0.4, 0.5, 0.9, 0.1])
TRUE_CLASS = frame(label=[0, 2, 1, 2, 0])
TABLE = frame(p0=[0.6, 0.1, 0.3, 0.2, 0.5], p1=[0.3, 0.3, 0.3, 0.5, 0.4], p2=[0.1, 0.6, 0.4, 0.3, 0.1])
P = ["p0", "p1", "p2"]
PROBS = TABLE[P].to_numpy()
AMOUNTS = frame(y=[3.0, 0.5, 2.0, 7.0])
FORECAST = frame(y=[2.5, 0.0, 2.0, 8.0])
RATINGS = frame(y=[1, 2, 3, 4, 2, 0])
RATED = frame(y=[1, 3, 3, 2, 2, 1])

SKLEARN_CASES = [  # (metric, params, answers, submission, columns, scikit-learn's value)
    ("f1", {"average": "macro"}, LABELS, GUESSED, ["y"], skm.f1_score(LABELS.y, GUESSED.y, average="macro")),
    ("precision", {"average": "weighted"}, LABELS, GUESSED, ["y"],
     skm.precision_score(LABELS.y, GUESSED.y, average="weighted")),
    ("recall", {"average": "micro"}, LABELS, GUESSED, ["y"], skm.recall_score(LABELS.y, GUESSED.y, average="micro")),
    ("f1", {}, FLAGS, frame(y=[0, 1, 0, 1, 1, 0]), ["y"], skm.f1_score(FLAGS.y, [0, 1, 0, 1, 1, 0])),
    ("qwk", {}, RATINGS, RATED, ["y"], skm.cohen_kappa_score(RATINGS.y, RATED.y, weights="quadratic")),
    ("r2", {}, AMOUNTS, FORECAST, ["y"], skm.r2_score(AMOUNTS.y, FORECAST.y)),
    ("rmsle", {}, AMOUNTS, FORECAST, ["y"], skm.root_mean_squared_log_error(AMOUNTS.y, FORECAST.y)),
    ("mape", {}, AMOUNTS, FORECAST, ["y"], skm.mean_absolute_percentage_error(AMOUNTS.y, FORECAST.y)),
    ("roc_auc", {}, FLAGS, ODDS, ["y"], skm.roc_auc_score(FLAGS.y, ODDS.y)),
    ("roc_auc", {}, TRUE_CLASS, TABLE, P,
     skm.roc_auc_score(TRUE_CLASS.label, PROBS / PROBS.sum(1, keepdims=True), multi_class="ovr")),
    ("log_loss", {}, FLAGS, ODDS, ["y"], skm.log_loss(FLAGS.y, ODDS.y)),
    ("log_loss", {}, TRUE_CLASS, TABLE, P, skm.log_loss(TRUE_CLASS.label, PROBS / PROBS.sum(1, keepdims=True))),
    ("top_k_accuracy", {"k": 2}, TRUE_CLASS, TABLE, P, skm.top_k_accuracy_score(TRUE_CLASS.label, PROBS, k=2)),
    ("proba_accuracy", {}, TRUE_CLASS, TABLE, P, skm.accuracy_score(TRUE_CLASS.label, PROBS.argmax(1))),
    ("map_at_k", {"k": 3}, frame(r=["a b", "c", "d"]), frame(r=["b x a", "x y c", "q"]), ["r"],
     np.mean([(1 + 2 / 3) / 2, 1 / 3, 0.0])),
]


@pytest.mark.parametrize("name, params, answers, submission, columns, expected", SKLEARN_CASES)
def test_sklearn_metrics_give_sklearns_value(name, params, answers, submission, columns, expected):
    assert score(name, answers, submission, columns, params) == pytest.approx(float(expected))


SKLEARN_PERFECT = [
    ("f1", {"average": "macro"}, LABELS, LABELS, ["y"], 1.0), ("precision", {}, FLAGS, FLAGS, ["y"], 1.0),
    ("recall", {"average": "weighted"}, LABELS, LABELS, ["y"], 1.0), ("qwk", {}, RATINGS, RATINGS, ["y"], 1.0),
    ("r2", {}, AMOUNTS, AMOUNTS, ["y"], 1.0), ("rmsle", {}, AMOUNTS, AMOUNTS, ["y"], 0.0),
    ("mape", {}, AMOUNTS, AMOUNTS, ["y"], 0.0), ("roc_auc", {}, FLAGS, FLAGS, ["y"], 1.0),
    ("log_loss", {}, FLAGS, FLAGS.astype(float), ["y"], skm.log_loss(FLAGS.y, FLAGS.y.astype(float))),
    ("proba_accuracy", {}, frame(label=["p1", "p0"]), frame(p0=[0.1, 0.8], p1=[0.9, 0.2]), ["p0", "p1"], 1.0),
    ("top_k_accuracy", {"k": 1}, TRUE_CLASS, frame(p0=[1, 0, 0, 0, 1], p1=[0, 0, 1, 0, 0], p2=[0, 1, 0, 1, 0]), P,
     1.0),
    ("map_at_k", {}, frame(r=["a b", "c"]), frame(r=["b a", "c"]), ["r"], 1.0),
]


@pytest.mark.parametrize("name, params, answers, submission, columns, best", SKLEARN_PERFECT)
def test_sklearn_metrics_on_a_perfect_submission(name, params, answers, submission, columns, best):
    assert score(name, answers, submission, columns, params) == pytest.approx(best)


def test_sklearn_metrics_on_known_bad_submissions():
    assert score("roc_auc", FLAGS, frame(y=1 - FLAGS.y.astype(float)), ["y"]) == 0.0
    assert score("f1", FLAGS, frame(y=1 - FLAGS.y), ["y"]) == 0.0
    assert score("qwk", frame(y=[0, 1, 2]), frame(y=[2, 1, 0]), ["y"]) == pytest.approx(-1.0)
    assert score("proba_accuracy", TRUE_CLASS, frame(p0=[0, 1, 1, 1, 0], p1=[1, 0, 0, 0, 1], p2=[0] * 5), P) == 0.0
    assert score("map_at_k", frame(r=["a"]), frame(r=["x y z a"]), ["r"], {"k": 3}) == 0.0


@pytest.mark.parametrize("name, params, answers, submission, columns, message", [
    ("f1", {}, LABELS, GUESSED, ["y"], "average `binary` needs two classes"),
    ("f1", {"average": "mean"}, LABELS, GUESSED, ["y"], "average must be one of"),
    ("f1", {"k": 2}, LABELS, GUESSED, ["y"], "`f1` takes no parameter k"),
    ("qwk", {}, RATINGS, frame(y=[1.5] * 6), ["y"], "whole-number ratings"),
    ("rmsle", {}, AMOUNTS, frame(y=[-1.0, 0, 0, 0]), ["y"], "at least 0"),
    ("roc_auc", {}, frame(y=[0.5, 1]), frame(y=[0.5, 1]), ["y"], "must hold 0 or 1"),
    ("log_loss", {}, frame(label=[7, 0, 1, 2, 0]), TABLE, P, "classes \\['7'\\]"),
    ("top_k_accuracy", {"k": 4}, TRUE_CLASS, TABLE, P, "k must lie between 1 and the 3 columns"),
    ("proba_accuracy", {}, TRUE_CLASS, TABLE.assign(p1=[0.1, None, 0.2, 0.3, 0.3]), P, "not finite numbers"),
    ("proba_accuracy", {"answer": "class"}, TRUE_CLASS, TABLE, P, r"answers lack the scored column\(s\) \['class'\]"),
])
def test_sklearn_metrics_refuse_malformed_input(name, params, answers, submission, columns, message):
    with pytest.raises(MetricError, match=message):
        score(name, answers, submission, columns, params)


def test_a_probability_table_submission_is_validated(tmp_path):
    from mlab.scoring.submission import SubmissionError, load_and_validate, load_answers

    answers = tmp_path / "answers.csv"
    answers.write_text("id,label\n1,0\n2,1\n")
    good = tmp_path / "good.csv"
    good.write_text("id,p0,p1\n2,0.2,0.8\n1,0.9,0.1\n")
    truth = load_answers(answers, "id", ["p0", "p1"], "proba_accuracy")
    aligned = load_and_validate(good, answers, "id", ["p0", "p1"], "proba_accuracy")
    assert score("proba_accuracy", truth, aligned, ["p0", "p1"]) == 1.0
    bad = tmp_path / "bad.csv"
    bad.write_text("id,p0,p1\n1,1.5,0.1\n2,,0.8\n")
    with pytest.raises(SubmissionError, match=r"1 value\(s\) in `p0` are empty or NaN"):
        load_and_validate(bad, answers, "id", ["p0", "p1"], "proba_accuracy")
    bad.write_text("id,p0,p1\n1,1.5,0.1\n2,0.2,0.8\n")
    with pytest.raises(SubmissionError, match=r"`p0` are out of range \(e.g. '1.5'\); expected a probability"):
        load_and_validate(bad, answers, "id", ["p0", "p1"], "proba_accuracy")
