"""Starter script: multi-label classification of seafloor pictures plus an out-of-sample score.

Features are the pictures shrunk to 8x8 pixels (averaging 4x4 blocks). One logistic
regression per category seen in training gives each category a probability; categories are
ranked by it. The out-of-sample score is one minus the highest category probability: a
picture none of the known categories fits well is probably from elsewhere.
Checks the ranking on held-out training pictures, then writes submission.csv.
"""

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import MultiLabelBinarizer, StandardScaler

TOP_K = 20


def features(images):
    """Average 4x4 blocks of each picture, less its median colour (the water), and flatten:
    (N, S, S, 3) -> (N, (S/4)^2 * 3)."""
    n, size, _, channels = images.shape
    water = np.median(images.reshape(n, -1, channels), axis=1)
    blocks = images.reshape(n, size // 4, 4, size // 4, 4, channels).mean(axis=(2, 4))
    return (blocks - water[:, None, None, :]).reshape(n, -1) / 255.0


def average_precision_at_k(actual, ranked, k=TOP_K):
    hits, total = 0, 0.0
    for rank, category in enumerate(ranked[:k], start=1):
        if category in actual and category not in ranked[: rank - 1]:
            hits += 1
            total += hits / rank
    return total / min(len(actual), k) if actual else 0.0


def fit(X, y):
    scaler = StandardScaler().fit(X)
    model = OneVsRestClassifier(LogisticRegression(C=0.1, max_iter=300)).fit(scaler.transform(X), y)
    return scaler, model


def rank_categories(scaler, model, classes, X):
    """Category ids ranked best first, and the probability of each picture's best category."""
    probabilities = model.predict_proba(scaler.transform(X))
    order = np.argsort(-probabilities, axis=1)[:, :TOP_K]
    return [[classes[j] for j in row] for row in order], probabilities.max(axis=1)


train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
X = features(np.load("train_images.npy"))
X_test = features(np.load("test_images.npy"))
labels = [text.split() for text in train["categories"].astype(str)]
binarizer = MultiLabelBinarizer()
y = binarizer.fit_transform(labels)
classes = list(binarizer.classes_)

# Hold out a fifth of the training pictures to measure the category ranking.
X_fit, X_val, y_fit, y_val, _, labels_val = train_test_split(X, y, labels, test_size=0.2, random_state=1)
scaler, model = fit(X_fit, y_fit)
ranked, _ = rank_categories(scaler, model, classes, X_val)
map20 = np.mean([average_precision_at_k(a, r) for a, r in zip(labels_val, ranked)])
print(f"Validation MAP@20 of the category ranking: {map20:.3f}")

# Refit on all training pictures and predict the test pictures.
scaler, model = fit(X, y)
ranked, best = rank_categories(scaler, model, classes, X_test)
submission = pd.DataFrame({
    "id": test["id"],
    "categories": [" ".join(r) for r in ranked],
    "osd": np.round(1.0 - best, 4),
})
submission.to_csv("submission.csv", index=False)
print(f"Wrote submission.csv with {len(submission)} rows")
