"""Starter script: predict which passengers were Transported.

Reads train.csv (with Transported) and test.csv (without it) from the current
directory.  The model is a logistic regression on four categorical columns
only, one-hot encoded (a missing value is its own category).  It reports its
accuracy on a held-out fifth of train.csv, then refits on every training row
and writes submission.csv with the columns PassengerId and Transported.
"""

import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")

features = ["HomePlanet", "CryoSleep", "Destination", "VIP"]


def encode(df: pd.DataFrame) -> pd.DataFrame:
    """One column per (feature, value) pair, 0/1; test columns are aligned to train's."""
    encoded = pd.get_dummies(df[features].astype(str), dtype=int)
    return encoded.reindex(columns=train_columns, fill_value=0)


train_columns = pd.get_dummies(train[features].astype(str), dtype=int).columns
X = encode(train)
y = train["Transported"].astype(bool)

# Hold out a fifth of the training rows to measure the model.
X_fit, X_val, y_fit, y_val = train_test_split(X, y, test_size=0.2, random_state=1)
model = LogisticRegression(max_iter=1000).fit(X_fit, y_fit)
print(f"Validation accuracy: {accuracy_score(y_val, model.predict(X_val)):.4f}")

# Refit on every training row and predict the test passengers.
model = LogisticRegression(max_iter=1000).fit(X, y)
submission = pd.DataFrame({"PassengerId": test["PassengerId"], "Transported": model.predict(encode(test))})
submission.to_csv("submission.csv", index=False)
print(f"Wrote submission.csv with {len(submission)} rows")
