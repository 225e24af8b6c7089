"""Multi-label classification of seafloor pictures plus an out-of-sample score.

Changes from the starter:
  * Features: besides the 8x8 block averages (less the water colour), each picture is
    described by the water colour itself and by colour statistics of its non-water
    pixels (how many pixels of each hue family, their mean colour), since the
    categories differ by colour and shape.
  * Categories: one logistic regression per category seen in training, as before.
    Categories listed in category_key.csv that never occur in training are appended at
    the end of the ranking (up to 20), so pictures from other waters can still earn
    credit for them.
  * Out-of-sample score: how atypical a picture's water colour is for the training
    pictures (a Gaussian fitted to the training pictures' water colours; the squared
    Mahalanobis distance, counted only on the darker side, since deeper water is
    darker), plus the starter's signal, one minus the best category probability.
Checks the ranking on held-out training pictures, then writes submission.csv.
"""

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import MultiLabelBinarizer, StandardScaler

TOP_K = 20


def water_colour(images):
    n, _, _, channels = images.shape
    return np.median(images.reshape(n, -1, channels).astype(np.float64), axis=1)


def features(images):
    n, size, _, channels = images.shape
    pixels = images.reshape(n, -1, channels).astype(np.float64)
    water = water_colour(images)
    blocks = images.reshape(n, size // 4, 4, size // 4, 4, channels).mean(axis=(2, 4))
    block_part = (blocks - water[:, None, None, :]).reshape(n, -1) / 255.0
    # Pixels that differ clearly from the water are the animals.
    diff = pixels - water[:, None, :]
    animal = np.linalg.norm(diff, axis=2) > 40
    share = animal.mean(axis=1, keepdims=True)
    mean_animal = (pixels * animal[..., None]).sum(axis=1) / np.maximum(animal.sum(axis=1), 1)[:, None]
    # Coarse colour histogram of the animal pixels (4 levels per channel, 64 bins).
    levels = np.clip(pixels // 64, 0, 3).astype(int)
    bins = levels[..., 0] * 16 + levels[..., 1] * 4 + levels[..., 2]
    hist = np.zeros((n, 64))
    for b in range(64):
        hist[:, b] = ((bins == b) & animal).mean(axis=1)
    return np.hstack([block_part, water / 255.0, share, mean_animal / 255.0, np.sqrt(hist)])


def average_precision_at_k(actual, ranked, k=TOP_K):
    hits, total = 0, 0.0
    for rank, category in enumerate(ranked[:k], start=1):
        if category in actual and category not in ranked[: rank - 1]:
            hits += 1
            total += hits / rank
    return total / min(len(actual), k) if actual else 0.0


def fit(X, y):
    scaler = StandardScaler().fit(X)
    model = OneVsRestClassifier(LogisticRegression(C=0.05, max_iter=1000)).fit(scaler.transform(X), y)
    return scaler, model


def rank_categories(scaler, model, classes, X, unseen):
    probabilities = model.predict_proba(scaler.transform(X))
    order = np.argsort(-probabilities, axis=1)
    ranked = [([classes[j] for j in row] + unseen)[:TOP_K] for row in order]
    return ranked, probabilities.max(axis=1)


train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
key = pd.read_csv("category_key.csv")
train_images, test_images = np.load("train_images.npy"), np.load("test_images.npy")
X, X_test = features(train_images), features(test_images)
labels = [text.split() for text in train["categories"].astype(str)]
binarizer = MultiLabelBinarizer()
y = binarizer.fit_transform(labels)
classes = list(binarizer.classes_)
unseen = [str(c) for c in key["id"] if str(c) not in classes]

X_fit, X_val, y_fit, y_val, _, labels_val = train_test_split(X, y, labels, test_size=0.2, random_state=1)
scaler, model = fit(X_fit, y_fit)
ranked, _ = rank_categories(scaler, model, classes, X_val, unseen)
map20 = np.mean([average_precision_at_k(a, r) for a, r in zip(labels_val, ranked)])
print(f"Validation MAP@20 of the category ranking: {map20:.3f}")

scaler, model = fit(X, y)
ranked, best = rank_categories(scaler, model, classes, X_test, unseen)

# Out-of-sample score from the water colour: distance from the training pictures' water.
water_train, water_test = water_colour(train_images), water_colour(test_images)
centre = water_train.mean(axis=0)
inverse = np.linalg.inv(np.cov(water_train, rowvar=False))
delta = water_test - centre
distance = np.einsum("ij,jk,ik->i", delta, inverse, delta)
darker = delta.sum(axis=1) < 0
osd = np.where(darker, distance, 0.0) + (1.0 - best)

submission = pd.DataFrame({
    "id": test["id"],
    "categories": [" ".join(r) for r in ranked],
    "osd": np.round(osd, 4),
})
submission.to_csv("submission.csv", index=False)
print(f"Wrote submission.csv with {len(submission)} rows")
