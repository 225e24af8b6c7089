"""Starter script: predict UPDRS scores now and 6, 12 and 24 months ahead (a simple baseline).

For each of the four scores it fits one straight line, rating = a + b * month, to every
rated visit in train_clinical_data.csv, and predicts a visit's score h months ahead as the
line's value at visit_month + h. Proteins and peptides are not used yet.
Checks the idea on held-out training patients, then writes submission.csv.
"""

import numpy as np
import pandas as pd

SCORES = ["updrs_1", "updrs_2", "updrs_3", "updrs_4"]


def smape_plus_one(actual, predicted):
    """SMAPE in percent on values shifted by one, the competition's metric."""
    a, p = np.asarray(actual, float) + 1, np.asarray(predicted, float) + 1
    return 100 * np.mean(2 * np.abs(p - a) / (np.abs(a) + np.abs(p)))


def fit_trends(clinical):
    """One (intercept, slope) pair per score, from every visit where the score is known."""
    trends = {}
    for score in SCORES:
        rated = clinical.dropna(subset=[score])
        slope, intercept = np.polyfit(rated["visit_month"], rated[score], deg=1)
        trends[score] = (intercept, slope)
    return trends


def parse_prediction_ids(ids):
    """Split ids like '55_6_updrs_3_plus_12_months' into patient, month, score and horizon."""
    parts = pd.Series(ids).str.extract(r"^(\d+)_(\d+)_(updrs_\d)_plus_(\d+)_months$")
    parts.columns = ["patient_id", "visit_month", "score", "horizon"]
    for column in ["patient_id", "visit_month", "horizon"]:
        parts[column] = parts[column].astype(int)
    return parts


def predict(trends, rows):
    intercept = rows["score"].map(lambda s: trends[s][0])
    slope = rows["score"].map(lambda s: trends[s][1])
    return np.clip(intercept + slope * (rows["visit_month"] + rows["horizon"]), 0, None)


clinical = pd.read_csv("train_clinical_data.csv")

# Hold out a fifth of the training patients, build their targets like the test set's.
patients = clinical["patient_id"].unique()
held_out = np.random.default_rng(0).choice(patients, size=len(patients) // 5, replace=False)
fit_part = clinical[~clinical["patient_id"].isin(held_out)]
val_part = clinical[clinical["patient_id"].isin(held_out)]
rated = val_part.melt(id_vars=["patient_id", "visit_month"], value_vars=SCORES,
                      var_name="score", value_name="rating").dropna()
val_rows = pd.concat([
    val_part[["patient_id", "visit_month"]].merge(
        rated.assign(visit_month=rated["visit_month"] - h, horizon=h), on=["patient_id", "visit_month"])
    for h in (0, 6, 12, 24)
])
val_error = smape_plus_one(val_rows["rating"], predict(fit_trends(fit_part), val_rows))
print(f"Validation SMAPE+1: {val_error:.2f}")

# Refit on every training patient and predict the rows listed in test_prediction_ids.csv.
submission = pd.read_csv("test_prediction_ids.csv")
rows = parse_prediction_ids(submission["prediction_id"])
submission["rating"] = predict(fit_trends(clinical), rows).round(2)
submission.to_csv("submission.csv", index=False)
print(f"Wrote submission.csv with {len(submission)} rows")
