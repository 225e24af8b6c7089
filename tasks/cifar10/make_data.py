"""Generate the lite data of the cifar10 task: small colour images in ten classes.

The real task classifies CIFAR-10 photographs (32x32 RGB, ten classes).  The
lite variant keeps that shape, 32x32x3 uint8 images labelled 0-9, but draws
them from scikit-learn's bundled handwritten digits (``load_digits``, 1,797
8x8 grey images, shipped inside the package, no download).  Each digit is
enlarged to a random size, smoothed, painted in a random colour at a random
place on a random-coloured background with clutter (bars and blobs) and pixel
noise, so that a classifier has to learn shape rather than colour or position.

Files written (the same layout a loader of the real CIFAR-10 writes):

* public/train.npz  -- ``images`` (N, 32, 32, 3) uint8, ``labels`` (N,) int64
* public/test.npz   -- ``images`` (M, 32, 32, 3) uint8, ``ids`` (M,) int64
* private/answers.csv -- columns ``id,label`` for the M test images

A fifth of the images (seeded shuffle) become the test set.  Deterministic for
a given seed: every random draw comes from one ``numpy.random.Generator``.

A sample (``sample=N``, which ``mlabc check`` asks for) writes the same files of
about N images, rendered the same way from random 8x8 glyphs labelled 0-9 in turn
instead of scikit-learn's digits, whose import alone costs a second.
"""

from __future__ import annotations

import pathlib

from types import SimpleNamespace

import numpy as np
import pandas as pd

SIZE = 32
TEST_FRACTION = 0.2
TRAIN_COPIES = 3       # each training digit is drawn this many times, each time differently
NOISE_STD = 10.0
MIN_CONTRAST = 90.0    # brightness gap between the object and the background's base colour (0-255)
CLUTTER_OPACITY = 0.5
LUMA = np.array([0.299, 0.587, 0.114])


def _smooth(image: np.ndarray) -> np.ndarray:
    """3x3 box blur with edge padding, so enlarged digits lose their blocky edges."""
    padded = np.pad(image, 1, mode="edge")
    rows, cols = image.shape
    return sum(padded[r:r + rows, c:c + cols] for r in range(3) for c in range(3)) / 9.0


def _enlarge(digit: np.ndarray, side: int) -> np.ndarray:
    """Resize an 8x8 digit (values 0-16) to side x side, values in [0, 1]."""
    index = (np.arange(side) * 8 // side).clip(0, 7)
    big = digit[np.ix_(index, index)] / 16.0
    return _smooth(big).clip(0.0, 1.0)


def _random_colour(rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(0, 255, size=3)


def _background(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A flat colour with a few random bars and soft blobs behind the object; also its base colour."""
    base = _random_colour(rng)
    canvas = np.empty((SIZE, SIZE, 3))
    canvas[:] = base
    for _ in range(rng.integers(0, 3)):
        colour = _random_colour(rng)
        if rng.random() < 0.5:   # a bar, horizontal or vertical
            start, width = rng.integers(0, SIZE - 2), rng.integers(2, 6)
            band = (slice(start, start + width), slice(None))
            if rng.random() < 0.5:
                band = band[::-1]
            canvas[band] = (1 - CLUTTER_OPACITY) * canvas[band] + CLUTTER_OPACITY * colour
        else:                    # a blurred disc
            yy, xx = np.mgrid[0:SIZE, 0:SIZE]
            cy, cx, radius = rng.uniform(0, SIZE), rng.uniform(0, SIZE), rng.uniform(3, 9)
            distance2 = (yy - cy) ** 2 + (xx - cx) ** 2
            weight = CLUTTER_OPACITY * np.exp(-distance2 / (2 * radius ** 2))[..., None]
            canvas = canvas * (1 - weight) + colour * weight
    return canvas, base


def _luminance(colour: np.ndarray) -> float:
    return float(colour @ LUMA)


def _foreground_colour(base: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random colour bright or dark enough against the background's base colour to stay visible."""
    while True:
        colour = _random_colour(rng)
        if abs(_luminance(colour) - _luminance(base)) >= MIN_CONTRAST:
            return colour


def render(digit: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One 32x32x3 uint8 image of the digit on a cluttered background."""
    canvas, base = _background(rng)
    side = int(rng.integers(18, 29))
    mask = _enlarge(digit, side) * rng.uniform(0.75, 1.0)  # faint strokes on some images
    top, left = rng.integers(0, SIZE - side + 1, size=2)
    foreground = _foreground_colour(base, rng)
    window = canvas[top:top + side, left:left + side]
    canvas[top:top + side, left:left + side] = window * (1 - mask[..., None]) + foreground * mask[..., None]
    canvas += rng.normal(0.0, NOISE_STD, size=canvas.shape)
    return canvas.round().clip(0, 255).astype(np.uint8)


def _glyphs(rng: np.random.Generator, count: int) -> SimpleNamespace:
    """`count` random 8x8 images (values 0-16) labelled 0-9 in turn, shaped as load_digits'."""
    return SimpleNamespace(images=rng.integers(0, 17, size=(count, 8, 8)).astype(float),
                           target=np.arange(count) % 10)


def make(public_dir: pathlib.Path, private_dir: pathlib.Path, seed: int, sample: int | None = None) -> None:
    """Write train.npz and test.npz to public_dir and answers.csv to private_dir (of about
    `sample` images when given: see the module's docstring)."""
    public_dir, private_dir = pathlib.Path(public_dir), pathlib.Path(private_dir)
    rng = np.random.default_rng(seed)
    if sample is None:
        from sklearn.datasets import load_digits

        digits = load_digits()
    else:
        digits = _glyphs(rng, max(10, round(sample / (TEST_FRACTION + (1 - TEST_FRACTION) * TRAIN_COPIES))))
    order = rng.permutation(len(digits.target))
    n_test = round(TEST_FRACTION * len(order))
    # Split by source digit first, so no handwritten digit appears on both sides.
    test_digits = order[:n_test]
    train_digits = rng.permutation(np.repeat(order[n_test:], TRAIN_COPIES))

    train_images = np.stack([render(digits.images[i], rng) for i in train_digits])
    test_images = np.stack([render(digits.images[i], rng) for i in test_digits])
    test_ids = np.arange(n_test, dtype=np.int64)

    public_dir.mkdir(parents=True, exist_ok=True)
    private_dir.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(public_dir / "train.npz", images=train_images,
                        labels=digits.target[train_digits].astype(np.int64))
    np.savez_compressed(public_dir / "test.npz", images=test_images, ids=test_ids)
    answers = pd.DataFrame({"id": test_ids, "label": digits.target[test_digits].astype(np.int64)})
    answers.to_csv(private_dir / "answers.csv", index=False)
    return None
