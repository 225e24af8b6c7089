"""The catalogue's metrics for the graders the field uses (mlab.scoring.metrics.field, dice over pixels,
the `rows` filter), each against a value worked out by hand in the comment beside it."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from mlab.scoring.metrics.tabular import score
from mlab.scoring.metrics.values import MetricError


def frame(**columns) -> pd.DataFrame:
    return pd.DataFrame(columns)


def test_column_roc_auc_is_the_mean_of_each_label_columns_auc():
    answers = frame(a=[1, 0, 1, 0], b=[0, 0, 1, 1])
    submission = frame(a=[0.9, 0.1, 0.8, 0.3], b=[0.2, 0.6, 0.4, 0.9])
    # a: every positive above every negative, 1.0; b: positives 0.4, 0.9 against negatives 0.2, 0.6 win
    # 3 of the 4 pairs, 0.75; mean 0.875
    assert score("column_roc_auc", answers, submission, ["a", "b"]) == pytest.approx(0.875)


def test_column_roc_auc_refuses_a_label_column_of_one_class():
    with pytest.raises(MetricError, match=r"both 0 and 1 .* \['b'\] hold one value only"):
        score("column_roc_auc", frame(a=[1, 0], b=[0, 0]), frame(a=[0.5, 0.2], b=[0.1, 0.3]), ["a", "b"])


def test_lwlrap_weighs_every_true_label_alike():
    answers = frame(a=[1, 1], b=[0, 0], c=[0, 1])
    submission = frame(a=[0.9, 0.2], b=[0.5, 0.8], c=[0.1, 0.5])
    # row 1: a ranks first, precision 1. row 2 ranks b, c, a: c at rank 2 has 1 true label in the top 2 (1/2),
    # a at rank 3 has 2 (2/3). The three true labels average (1 + 1/2 + 2/3) / 3 = 13/18.
    assert score("lwlrap", answers, submission, ["a", "b", "c"]) == pytest.approx(13 / 18)


def test_kl_divergence_sums_over_labels_and_averages_over_rows():
    answers = frame(ham=[0, 1, 1, 0], spam=[1, 0, 0, 1])
    submission = frame(ham=[0.1, 0.9, 0.8, 0.35], spam=[0.9, 0.1, 0.2, 0.65])
    # only the true label adds: -ln 0.9, -ln 0.9, -ln 0.8, -ln 0.65, averaged: 0.216161...
    expected = -(2 * math.log(0.9) + math.log(0.8) + math.log(0.65)) / 4
    assert score("kl_divergence", answers, submission, ["ham", "spam"]) == pytest.approx(expected)
    assert expected == pytest.approx(0.216161, abs=1e-6)


def test_label_set_f1_counts_labels_over_all_rows():
    answers = frame(tags=["a b", "c", ""])
    submission = frame(tags=["a", "c d", ""])
    # TP a, c = 2; FP d = 1; FN b = 1: 2*2 / (2*2 + 1 + 1) = 2/3
    assert score("label_set_f1", answers, submission, ["tags"]) == pytest.approx(2 / 3)


def test_jaccard_of_lowercased_word_sets():
    answers = frame(text=["Hello world", "a", ""])
    submission = frame(text=["hello there world", "b", ""])
    # {hello, world} vs {hello, there, world}: 2/3; {a} vs {b}: 0; two empty texts: 1. Mean 5/9
    assert score("jaccard", answers, submission, ["text"]) == pytest.approx(5 / 9)


def test_levenshtein_is_the_mean_character_edit_distance():
    # kitten -> sitting: k->s, e->i, +g = 3; abc -> abc = 0; mean 1.5
    assert score("levenshtein", frame(s=["kitten", "abc"]), frame(s=["sitting", "abc"]), ["s"]) == 1.5


def test_levenshtein_takes_an_empty_prediction_as_a_text():
    assert score("levenshtein", frame(s=["abcd"]), frame(s=[""]), ["s"]) == 4.0


def test_word_error_rate_divides_by_the_words_of_the_answers():
    answers = frame(seq=["1 2 3", "4 5"])
    submission = frame(seq=["1 3", "4 5 6"])
    # one deletion, one insertion: 2 edits over 5 answer words
    assert score("word_error_rate", answers, submission, ["seq"]) == pytest.approx(0.4)


def test_kendall_tau_counts_inversions_over_all_rows_together():
    answers = frame(order=["a b c d", "x y"])
    submission = frame(order=["b a c d", "x y"])
    # one inverted pair; sum of n (n - 1) = 12 + 2 = 14: 1 - 4 * 1 / 14 = 5/7
    assert score("kendall_tau", answers, submission, ["order"]) == pytest.approx(5 / 7)


def test_kendall_tau_refuses_a_prediction_that_is_not_a_reordering():
    with pytest.raises(MetricError, match="row 1: kendall_tau needs the prediction"):
        score("kendall_tau", frame(order=["a b c"]), frame(order=["a b"]), ["order"])


def test_pearson_correlation():
    # y = 1, 2, 3 and f = 2, 4, 7: deviations (-1, 0, 1) and (-7/3, -1/3, 8/3); covariance sum 5,
    # norms sqrt(2) and sqrt(114)/3: r = 15 / sqrt(228)
    assert score("pearson", frame(y=[1, 2, 3]), frame(y=[2, 4, 7]), ["y"]) == pytest.approx(15 / math.sqrt(228))


def test_pearson_of_a_constant_prediction_is_zero():
    assert score("pearson", frame(y=[1, 2, 3]), frame(y=[5, 5, 5]), ["y"]) == 0.0


def test_spearman_is_the_mean_rank_correlation_of_the_columns():
    answers = frame(a=[1, 2, 3, 4], b=[1, 2, 3, 4])
    submission = frame(a=[10, 30, 20, 40], b=[4, 3, 2, 1])
    # a: ranks 1 3 2 4, sum d^2 = 2: 1 - 6*2 / (4 * 15) = 0.8; b: reversed, -1; mean -0.1
    assert score("spearman", answers, submission, ["a", "b"]) == pytest.approx(-0.1)


def test_mcc_of_a_confusion_table():
    # TP 1, FN 1, TN 2, FP 0: (1*2 - 0*1) / sqrt(1 * 2 * 2 * 3) = 2 / sqrt(12)
    value = score("mcc", frame(y=[1, 1, 0, 0]), frame(y=[1, 0, 0, 0]), ["y"])
    assert value == pytest.approx(2 / math.sqrt(12))


def test_error_rate_is_one_minus_accuracy():
    assert score("error_rate", frame(y=["a", "b", "c", "d"]), frame(y=["a", "b", "c", "x"]), ["y"]) == 0.25


def test_mcrmsle_averages_the_columns_rmsle():
    e = math.e - 1  # log1p(e - 1) = 1
    answers = frame(a=[0.0, e], b=[1.0, 2.0])
    submission = frame(a=[e, e], b=[1.0, 2.0])
    # a: log1p differences 1 and 0: sqrt(1/2); b: 0; mean sqrt(1/2) / 2
    assert score("mcrmsle", answers, submission, ["a", "b"]) == pytest.approx(math.sqrt(0.5) / 2)


def test_wape_weighs_errors_by_the_total_of_the_answers():
    # (2 + 2 + 0) / (10 + 20 + 30)
    assert score("wape", frame(y=[10, 20, -30]), frame(y=[12, 18, -30]), ["y"]) == pytest.approx(1 / 15)


def test_wape_refuses_answers_that_are_all_zero():
    with pytest.raises(MetricError, match="every answer in `y` is 0"):
        score("wape", frame(y=[0, 0]), frame(y=[1, 2]), ["y"])


def test_mase_scales_each_error_by_its_series_scale():
    answers = frame(y=[10, 20], scale=[2, 3])
    # |10 - 12| / 2 = 1 and |20 - 14| / 3 = 2: mean 1.5
    assert score("mase", answers, frame(y=[12, 14]), ["y"]) == 1.5
    named = frame(y=[10, 20], naive_mae=[2, 3])
    assert score("mase", named, frame(y=[12, 14]), ["y"], {"scale": "naive_mae"}) == 1.5


def test_dice_over_pixels_is_one_dice_of_all_rows():
    answers = frame(mask=["1 4", ""])
    submission = frame(mask=["3 4", "1 2"])
    # row 1: pixels 1-4 against 3-6, overlap 2; row 2: nothing against 2 pixels.
    # over rows: (2*2 / 8 + 0) / 2 = 0.25; over pixels: 2*2 / (4 + 4 + 0 + 2) = 0.4
    assert score("dice", answers, submission, ["mask"]) == pytest.approx(0.25)
    assert score("dice", answers, submission, ["mask"], {"over": "pixels"}) == pytest.approx(0.4)


def test_rows_scores_only_the_flagged_rows():
    answers = frame(y=[1, 2, 3], keep=["1", "0", "1"])
    submission = frame(y=[2, 100, 5])
    # rows 1 and 3: (1 + 2) / 2
    assert score("mae", answers, submission, ["y"], {"rows": "keep"}) == 1.5
    assert score("mae", answers, submission, ["y"]) == pytest.approx(101 / 3)  # every row: (1 + 98 + 2) / 3


def test_rows_flags_must_be_zero_or_one():
    with pytest.raises(MetricError, match=r"row flag `keep` must hold 1 \(scored\) or 0, found \['yes'\]"):
        score("mae", frame(y=[1, 2], keep=["yes", "1"]), frame(y=[1, 2]), ["y"], {"rows": "keep"})


def test_rows_is_refused_by_a_metric_that_reads_no_table():
    from mlab.scoring.metrics.tabular import get_metric

    with pytest.raises(MetricError, match="`custom` takes no parameter rows"):
        get_metric("custom").settings({"rows": "keep"})
    assert get_metric("mae").answer_columns(["y"], {"rows": "keep"}) == ["y", "keep"]
