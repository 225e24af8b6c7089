"""Predict UPDRS scores now and 6, 12 and 24 months ahead from protein levels.

The starter fits one straight line over months per score and ignores the proteins. Here
each prediction row (patient, visit month, score, horizon) is described by:
  - the visit month, the horizon and the month predicted for,
  - the log NPX of every protein at the patient's latest sample taken at or before the
    visit (or the earliest sample when none is that early),
  - the mean log NPX of every protein over all the patient's samples and its change per
    month between the first and the last sample (a hint of how fast the disease moves).
One gradient-boosting regressor per score, with the absolute-error loss (SMAPE rewards
the median more than the mean), is fitted on training rows built the way the test rows
are. It is checked on the same held-out fifth of training patients as the starter, then
refitted on every training patient.
"""

import os

# The tables are small: one thread is as fast, and avoids OpenMP's overhead on a busy machine.
os.environ["OMP_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.ensemble import HistGradientBoostingRegressor  # noqa: E402

SCORES = ["updrs_1", "updrs_2", "updrs_3", "updrs_4"]
HORIZONS = (0, 6, 12, 24)


def smape_plus_one(actual, predicted):
    """SMAPE in percent on values shifted by one, the competition's metric."""
    a, p = np.asarray(actual, float) + 1, np.asarray(predicted, float) + 1
    return 100 * np.mean(2 * np.abs(p - a) / (np.abs(a) + np.abs(p)))


def protein_table(proteins):
    """One row per sampled visit (patient_id, visit_month), one log-NPX column per protein."""
    wide = proteins.assign(logNPX=np.log(proteins["NPX"])).pivot_table(
        index=["patient_id", "visit_month"], columns="UniProt", values="logNPX")
    return wide.sort_index()


def patient_summary(wide):
    """Per patient: mean log NPX and its change per month from first to last sample."""
    grouped = wide.groupby(level="patient_id")
    mean = grouped.mean().add_prefix("mean_")
    first, last = grouped.first(), grouped.last()
    months = wide.reset_index().groupby("patient_id")["visit_month"].agg(["min", "max"])
    span = (months["max"] - months["min"]).replace(0, np.nan)
    slope = (last - first).div(span, axis=0).add_prefix("slope_")
    return mean.join(slope)


def features(rows, wide, summary):
    """rows: patient_id, visit_month, horizon. Returns a numeric feature frame, same order."""
    rows = rows.reset_index(drop=True)
    samples = wide.reset_index().rename(columns={"visit_month": "sample_month"}).sort_values("sample_month")
    left = rows[["patient_id", "visit_month"]].assign(order=np.arange(len(rows))).sort_values("visit_month")
    latest = pd.merge_asof(left, samples, left_on="visit_month", right_on="sample_month",
                           by="patient_id", direction="backward")
    earliest = pd.merge_asof(left, samples, left_on="visit_month", right_on="sample_month",
                             by="patient_id", direction="forward")
    latest = latest.set_index("order").sort_index()
    earliest = earliest.set_index("order").sort_index()
    current = latest.combine_first(earliest)[list(wide.columns)].add_prefix("now_")
    out = pd.DataFrame({
        "visit_month": rows["visit_month"].to_numpy(),
        "horizon": rows["horizon"].to_numpy(),
        "target_month": (rows["visit_month"] + rows["horizon"]).to_numpy(),
    })
    out = pd.concat([out, current.reset_index(drop=True)], axis=1)
    out = pd.concat([out, summary.reindex(rows["patient_id"]).reset_index(drop=True)], axis=1)
    return out


def target_rows(clinical):
    """Every (patient, visit, score, horizon) whose score is known at visit + horizon."""
    rated = clinical.melt(id_vars=["patient_id", "visit_month"], value_vars=SCORES,
                          var_name="score", value_name="rating").dropna()
    return pd.concat([
        clinical[["patient_id", "visit_month"]].merge(
            rated.assign(visit_month=rated["visit_month"] - h, horizon=h), on=["patient_id", "visit_month"])
        for h in HORIZONS
    ], ignore_index=True)


def fit_models(rows, wide, summary):
    models = {}
    for score in SCORES:
        part = rows[rows["score"] == score]
        models[score] = HistGradientBoostingRegressor(
            loss="absolute_error", learning_rate=0.05, max_iter=300, max_leaf_nodes=15,
            min_samples_leaf=20, random_state=0,
        ).fit(features(part, wide, summary), part["rating"])
    return models


def predict(models, rows, wide, summary):
    rows = rows.reset_index(drop=True)
    out = np.zeros(len(rows))
    for score, model in models.items():
        mask = (rows["score"] == score).to_numpy()
        if mask.any():
            out[mask] = model.predict(features(rows[mask], wide, summary))
    return np.clip(out, 0, None)


clinical = pd.read_csv("train_clinical_data.csv")
train_wide = protein_table(pd.read_csv("train_proteins.csv"))
train_summary = patient_summary(train_wide)

# The starter's hold-out: a fifth of the training patients (seed 0).
patients = clinical["patient_id"].unique()
held_out = np.random.default_rng(0).choice(patients, size=len(patients) // 5, replace=False)
fit_rows = target_rows(clinical[~clinical["patient_id"].isin(held_out)])
val_rows = target_rows(clinical[clinical["patient_id"].isin(held_out)])
models = fit_models(fit_rows, train_wide, train_summary)
val_error = smape_plus_one(val_rows["rating"], predict(models, val_rows, train_wide, train_summary))
print(f"Validation SMAPE+1: {val_error:.2f}")

# Refit on every training patient and predict the rows listed in test_prediction_ids.csv.
models = fit_models(target_rows(clinical), train_wide, train_summary)
test_wide = protein_table(pd.read_csv("test_proteins.csv"))
test_summary = patient_summary(test_wide)
submission = pd.read_csv("test_prediction_ids.csv")
parts = submission["prediction_id"].str.extract(r"^(\d+)_(\d+)_(updrs_\d)_plus_(\d+)_months$")
parts.columns = ["patient_id", "visit_month", "score", "horizon"]
for column in ["patient_id", "visit_month", "horizon"]:
    parts[column] = parts[column].astype(int)
submission["rating"] = predict(models, parts, test_wide, test_summary).round(2)
submission.to_csv("submission.csv", index=False)
print(f"Wrote submission.csv with {len(submission)} rows")
