"""Starter script: score learner essays on six analytic measures (a deliberately simple baseline).

Each essay is described by two length features only (how many words, how many sentences),
and a ridge regression per measure maps them to the score. Checks the model on held-out
training essays, then writes submission.csv.
"""

import numpy as np
import pandas as pd
from sklearn.linear_model import Ridge
from sklearn.model_selection import train_test_split

MEASURES = ["cohesion", "syntax", "vocabulary", "phraseology", "grammar", "conventions"]


def length_features(texts):
    words = texts.str.split().str.len()
    sentences = texts.str.count(r"[.!?](\s|$)").clip(lower=1)
    return np.column_stack([np.log1p(words), np.log1p(sentences)])


def mcrmse(actual, predicted):
    """Mean over the measures of each measure's root mean squared error."""
    return np.mean(np.sqrt(np.mean((np.asarray(actual) - np.asarray(predicted)) ** 2, axis=0)))


train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
X = length_features(train["full_text"])
y = train[MEASURES].to_numpy()

X_fit, X_val, y_fit, y_val = train_test_split(X, y, test_size=0.2, random_state=1)
model = Ridge(alpha=1.0).fit(X_fit, y_fit)
print(f"Validation MCRMSE: {mcrmse(y_val, model.predict(X_val)):.4f}")
print(f"(predicting the training means instead: {mcrmse(y_val, np.tile(y_fit.mean(axis=0), (len(y_val), 1))):.4f})")

model = Ridge(alpha=1.0).fit(X, y)
predictions = np.clip(model.predict(length_features(test["full_text"])), 1.0, 5.0)
submission = pd.DataFrame(predictions, columns=MEASURES)
submission.insert(0, "text_id", test["text_id"])
submission.to_csv("submission.csv", index=False)
print(f"Wrote submission.csv with {len(submission)} rows")
