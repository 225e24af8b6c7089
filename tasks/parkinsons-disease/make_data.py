"""Data for the parkinsons-disease task: generated (lite) or converted from Kaggle (full).

Both variants end in the same files, written by `write_split`:

public/  train_clinical_data.csv  visit_id, patient_id, visit_month, updrs_1..updrs_4,
                                  upd23b_clinical_state_on_medication
         train_proteins.csv       visit_id, visit_month, patient_id, UniProt, NPX
         train_peptides.csv       visit_id, visit_month, patient_id, UniProt, Peptide, PeptideAbundance
         test_clinical_data.csv   visit_id, patient_id, visit_month          (no scores)
         test_proteins.csv, test_peptides.csv                               (same columns as train)
         test_prediction_ids.csv  prediction_id -- the predictions to make
private/ answers.csv              prediction_id, rating

Patients are split as whole groups (20% to test). A prediction is asked for every test
visit, every score k in 1..4 and every horizon h in {0, 6, 12, 24} months for which the
patient has a recorded updrs_k at month visit_month + h, as in the competition.

The lite generator models a latent disease state D(t) = s0 + rate * t per patient. Every
score rises with D; some proteins follow D, some follow the patient's progression rate,
the rest are noise; peptides are noisy parts of their protein.
"""
from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd

TEST_FRACTION = 0.2
HORIZONS = (0, 6, 12, 24)
SCORES = ("updrs_1", "updrs_2", "updrs_3", "updrs_4")
VISIT_SCHEDULE = (0, 3, 6, 9, 12, 18, 24, 30, 36, 42, 48, 54, 60, 72, 84, 96, 108)
SAMPLE_MONTHS = (0, 6, 12, 24, 36, 48, 60, 72, 84)
N_PATIENTS = 240

# (UniProt id, weight on the current disease state, weight on the progression rate)
PROTEINS = (
    ("O00391", 0.45, 0.00),
    ("O00533", 0.00, 0.50),
    ("P00450", 0.35, 0.00),
    ("P00734", 0.00, 0.00),
    ("P01024", 0.25, 0.30),
    ("P02753", 0.00, 0.00),
    ("P04180", -0.30, 0.00),
    ("P05060", 0.00, -0.40),
    ("P07333", 0.00, 0.00),
    ("Q92520", 0.00, 0.00),
)
AMINO_ACIDS = np.array(list("ACDEFGHIKLMNPQRSTVWY"))


def _patients(rng: np.random.Generator) -> pd.DataFrame:
    ids = rng.choice(np.arange(10, 65000), size=N_PATIENTS, replace=False)
    rate_z = rng.normal(size=N_PATIENTS)
    return pd.DataFrame({
        "patient_id": ids,
        "s0": rng.normal(size=N_PATIENTS),
        "rate_z": rate_z,
        # disease-state units per month: a few patients barely move, a few move fast
        "rate": 0.025 * np.exp(0.6 * rate_z),
        "follow_up": rng.choice(VISIT_SCHEDULE[4:], size=N_PATIENTS),
        "protein_level": rng.normal(scale=0.3, size=(N_PATIENTS, len(PROTEINS))).tolist(),
    })


def _visits(patients: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    rows = []
    for patient in patients.itertuples():
        for month in VISIT_SCHEDULE:
            if month > patient.follow_up or (month > 0 and rng.random() < 0.15):
                continue
            rows.append((patient.patient_id, month, patient.s0 + patient.rate * month))
    visits = pd.DataFrame(rows, columns=["patient_id", "visit_month", "state"])
    visits.insert(0, "visit_id", visits.patient_id.astype(str) + "_" + visits.visit_month.astype(str))
    return visits


def _clinical(visits: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    n = len(visits)
    state = visits.state.to_numpy()
    on_medication = rng.random(n) < 1 / (1 + np.exp(-(state - 0.5) * 1.5))
    recorded = rng.random(n) < 0.85
    medication = np.where(recorded, np.where(on_medication, "On", "Off"), None)
    scores = {
        "updrs_1": 6 + 3.0 * state + rng.normal(scale=2.0, size=n),
        "updrs_2": 6 + 4.0 * state + rng.normal(scale=2.0, size=n),
        "updrs_3": 20 + 10.0 * state - 5.0 * on_medication + rng.normal(scale=5.0, size=n),
        "updrs_4": np.where(state > 1.0, 2.0 * (state - 1.0), 0.0) + rng.normal(scale=0.8, size=n),
    }
    clinical = visits[["visit_id", "patient_id", "visit_month"]].copy()
    for name, values in scores.items():
        clinical[name] = np.clip(np.round(values), 0, None)
    # updrs_4 (complications of therapy) is often not assessed, mostly in early visits
    missing_4 = rng.random(n) < np.where(visits.visit_month < 24, 0.6, 0.25)
    clinical.loc[missing_4, "updrs_4"] = np.nan
    clinical.loc[rng.random(n) < 0.02, "updrs_3"] = np.nan
    clinical["upd23b_clinical_state_on_medication"] = medication
    return clinical


def _samples(visits: pd.DataFrame, patients: pd.DataFrame, rng: np.random.Generator):
    sampled = visits[visits.visit_month.isin(SAMPLE_MONTHS)]
    sampled = sampled[rng.random(len(sampled)) < 0.8].merge(patients, on="patient_id")
    levels = np.array(sampled.protein_level.tolist())
    base = np.linspace(9.5, 13.5, len(PROTEINS))
    state_w = np.array([p[1] for p in PROTEINS])
    rate_w = np.array([p[2] for p in PROTEINS])
    log_npx = (base + levels + np.outer(sampled.state, state_w) + np.outer(sampled.rate_z, rate_w)
               + rng.normal(scale=0.25, size=levels.shape))
    proteins = pd.DataFrame({
        "visit_id": np.repeat(sampled.visit_id.to_numpy(), len(PROTEINS)),
        "visit_month": np.repeat(sampled.visit_month.to_numpy(), len(PROTEINS)),
        "patient_id": np.repeat(sampled.patient_id.to_numpy(), len(PROTEINS)),
        "UniProt": np.tile([p[0] for p in PROTEINS], len(sampled)),
        "log_npx": log_npx.ravel(),
    })
    # about 5% of protein measurements fail quality control
    proteins = proteins[rng.random(len(proteins)) > 0.05].reset_index(drop=True)

    peptide_table = []
    for uniprot, *_ in PROTEINS:
        for _ in range(rng.integers(2, 5)):
            sequence = "".join(rng.choice(AMINO_ACIDS, size=rng.integers(7, 17)))
            peptide_table.append((uniprot, sequence, rng.normal(scale=0.8)))
    peptide_table = pd.DataFrame(peptide_table, columns=["UniProt", "Peptide", "offset"])
    peptides = proteins.merge(peptide_table, on="UniProt")
    peptides["PeptideAbundance"] = np.exp(peptides.log_npx + peptides.offset
                                          + rng.normal(scale=0.2, size=len(peptides))).round(1)
    peptides = peptides.drop(columns=["log_npx", "offset"])
    proteins["NPX"] = np.exp(proteins.pop("log_npx")).round(1)
    return proteins, peptides


def generate_tables(seed: int) -> dict[str, pd.DataFrame]:
    """Kaggle-shaped clinical, protein and peptide tables for generated patients."""
    rng = np.random.default_rng(seed)
    patients = _patients(rng)
    visits = _visits(patients, rng)
    clinical = _clinical(visits, rng)
    proteins, peptides = _samples(visits, patients, rng)
    return {"clinical": clinical, "proteins": proteins, "peptides": peptides}


def _targets(clinical: pd.DataFrame) -> pd.DataFrame:
    """prediction_id and rating for every test visit, score and horizon with a known rating."""
    known = clinical.melt(id_vars=["patient_id", "visit_month"], value_vars=list(SCORES),
                          var_name="score", value_name="rating").dropna(subset=["rating"])
    frames = []
    for horizon in HORIZONS:
        ahead = known.assign(visit_month=known.visit_month - horizon)
        asked = clinical[["patient_id", "visit_month"]].merge(ahead, on=["patient_id", "visit_month"])
        asked["horizon"] = horizon
        frames.append(asked)
    rows = pd.concat(frames).sort_values(["patient_id", "visit_month", "score", "horizon"])
    rows["prediction_id"] = (rows.patient_id.astype(str) + "_" + rows.visit_month.astype(str) + "_"
                             + rows.score + "_plus_" + rows.horizon.astype(str) + "_months")
    return rows[["prediction_id", "rating"]].reset_index(drop=True)


def write_split(tables: dict[str, pd.DataFrame], public_dir: pathlib.Path, private_dir: pathlib.Path,
                seed: int) -> None:
    """Split patients into train and test and write the public and private files."""
    clinical, proteins, peptides = tables["clinical"], tables["proteins"], tables["peptides"]
    patients = np.sort(clinical.patient_id.unique())
    rng = np.random.default_rng(seed)
    test_patients = set(rng.permutation(patients)[: round(TEST_FRACTION * len(patients))].tolist())

    def is_test(table: pd.DataFrame) -> pd.Series:
        return table.patient_id.isin(test_patients)

    public_dir.mkdir(parents=True, exist_ok=True)
    private_dir.mkdir(parents=True, exist_ok=True)
    clinical[~is_test(clinical)].to_csv(public_dir / "train_clinical_data.csv", index=False)
    proteins[~is_test(proteins)].to_csv(public_dir / "train_proteins.csv", index=False)
    peptides[~is_test(peptides)].to_csv(public_dir / "train_peptides.csv", index=False)
    test_clinical = clinical[is_test(clinical)]
    test_clinical[["visit_id", "patient_id", "visit_month"]].to_csv(
        public_dir / "test_clinical_data.csv", index=False)
    proteins[is_test(proteins)].to_csv(public_dir / "test_proteins.csv", index=False)
    peptides[is_test(peptides)].to_csv(public_dir / "test_peptides.csv", index=False)
    answers = _targets(test_clinical)
    answers[["prediction_id"]].to_csv(public_dir / "test_prediction_ids.csv", index=False)
    answers.to_csv(private_dir / "answers.csv", index=False)


def make(public_dir: pathlib.Path, private_dir: pathlib.Path, seed: int) -> None:
    """Lite variant: generate patients and write the split files."""
    write_split(generate_tables(seed), pathlib.Path(public_dir), pathlib.Path(private_dir), seed)


def prepare_kaggle(raw_dir: pathlib.Path, public_dir: pathlib.Path, private_dir: pathlib.Path,
                   seed: int) -> None:
    """Full variant: the competition's train_* files, split by patient like the lite data."""
    raw_dir = pathlib.Path(raw_dir)
    tables = {
        "clinical": pd.read_csv(raw_dir / "train_clinical_data.csv"),
        "proteins": pd.read_csv(raw_dir / "train_proteins.csv"),
        "peptides": pd.read_csv(raw_dir / "train_peptides.csv"),
    }
    write_split(tables, pathlib.Path(public_dir), pathlib.Path(private_dir), seed)
