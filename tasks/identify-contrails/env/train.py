"""Starter script: find contrails with one threshold (a deliberately simple baseline).

Contrails are ice clouds, which look colder at 12.3 um (band 15) than at 11.2 um
(band 14), so band 14 minus band 15 is raised along them. This script marks every pixel
whose band 14 - band 15 difference exceeds a threshold, choosing the threshold that
scores best on the training scenes, checks it on held-out training scenes, and writes
submission.csv with run-length encoded masks (see rle.py).
"""

import numpy as np
import pandas as pd

from rle import rle_encode

BANDS = ["band_11", "band_13", "band_14", "band_15"]


def band_difference(images):
    images = images.astype(np.float32)
    return images[..., BANDS.index("band_14")] - images[..., BANDS.index("band_15")]


def mean_dice(truth, predicted):
    """Dice coefficient of each scene's masks, averaged; two empty masks count as 1."""
    truth, predicted = truth.astype(bool), predicted.astype(bool)
    overlap = (truth & predicted).sum(axis=(1, 2))
    total = truth.sum(axis=(1, 2)) + predicted.sum(axis=(1, 2))
    return np.mean(np.where(total == 0, 1.0, 2 * overlap / np.maximum(total, 1)))


def best_threshold(difference, masks):
    candidates = np.quantile(difference, np.linspace(0.80, 0.999, 60))
    scores = [mean_dice(masks, difference > t) for t in candidates]
    return candidates[int(np.argmax(scores))]


images = np.load("train_images.npy")
masks = np.load("train_masks.npy")
test_images = np.load("test_images.npy")
test = pd.read_csv("test.csv", dtype={"record_id": str})

difference = band_difference(images)
n_fit = int(0.8 * len(images))
threshold = best_threshold(difference[:n_fit], masks[:n_fit])
print(f"Validation Dice: {mean_dice(masks[n_fit:], difference[n_fit:] > threshold):.4f} "
      f"(threshold {threshold:.2f} K)")

threshold = best_threshold(difference, masks)
predicted = band_difference(test_images) > threshold
submission = pd.DataFrame({"record_id": test["record_id"],
                           "encoded_pixels": [rle_encode(mask) for mask in predicted]})
submission.to_csv("submission.csv", index=False)
print(f"Wrote submission.csv with {len(submission)} rows")
