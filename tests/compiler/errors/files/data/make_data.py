"""Generators of the data-model corpus: each makes one mistake a task author made."""
import pandas as pd


def mismatched_ids(public, private, seed):
    """test.csv and answers.csv written from different rows."""
    pd.DataFrame({"id": range(1, 11), "x": range(10)}).to_csv(public / "train.csv", index=False)
    pd.DataFrame({"id": range(100, 120), "x": range(20)}).to_csv(public / "test.csv", index=False)
    pd.DataFrame({"id": range(101, 121), "y": [7, 3, 9, 1, 4] * 4}).to_csv(private / "answers.csv", index=False)


def crashes(public, private, seed):
    """A generator with a bug."""
    return pd.DataFrame({"id": [1, 2]}).loc[:, "missing"]
