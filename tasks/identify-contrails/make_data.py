"""Data for the identify-contrails task: generated (lite) or converted from Kaggle (full).

Both variants end in the same files, written by `write_split`:

public/  train_images.npy  float16 (N, H, W, 4) brightness temperatures in kelvin of the
                           infrared bands 11, 13, 14 and 15, row i <-> row i of train.csv
         train_masks.npy   uint8 (N, H, W), 1 where a pixel belongs to a contrail
         train.csv         record_id
         test_images.npy   float16 (M, H, W, 4)
         test.csv          record_id
private/ answers.csv       record_id, encoded_pixels (run-length encoding of the test masks:
                           "start length ..." with 1-based starts over the row-major
                           flattened mask; empty for a mask without contrails)

Lite: 32x32 scenes. The background is smooth: a surface and cloud temperature field, cold
cloud patches, and a water-vapour field that makes band 15 colder than band 14 by a varying
amount. Thin natural cirrus also shows up as broad warm patches of band 14 - band 15.
Contrails are thin ice clouds along straight or gently curved lines: they cool the bands,
band 15 more than band 14, so they are thin bright lines in band 14 - band 15.
"""
from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd

IMAGE_SIZE = 32
BANDS = ("band_11", "band_13", "band_14", "band_15")
N_TRAIN, N_TEST = 500, 150
NOISE_K = 0.25
# how much a contrail (or cirrus) of unit strength cools each band: ice absorbs more at
# 12.3 um (band 15) than at 11.2 um (band 14), so band 14 - band 15 rises over ice clouds
COOLING = np.array([0.9, 1.0, 1.0, 2.0])


def smooth_fields(rng: np.random.Generator, count: int, scale: float) -> np.ndarray:
    """Gaussian random fields of shape (count, S, S) with unit variance and correlation
    length about `scale` pixels."""
    white = rng.normal(size=(count, IMAGE_SIZE, IMAGE_SIZE))
    frequencies = np.fft.fftfreq(IMAGE_SIZE)
    k2 = frequencies[:, None] ** 2 + frequencies[None, :] ** 2
    fields = np.fft.ifft2(np.fft.fft2(white) * np.exp(-2 * (np.pi * scale) ** 2 * k2)).real
    fields -= fields.mean(axis=(1, 2), keepdims=True)
    return fields / fields.std(axis=(1, 2), keepdims=True)


def _distance_to_polyline(points: np.ndarray, vertices: np.ndarray) -> np.ndarray:
    """Distance from each point (P, 2) to the nearest segment of a polyline (V, 2)."""
    dy = points[:, :1] - vertices[None, :-1, 0]
    dx = points[:, 1:] - vertices[None, :-1, 1]
    sy, sx = np.diff(vertices[:, 0]), np.diff(vertices[:, 1])
    t = np.clip((dy * sy + dx * sx) / (sy ** 2 + sx ** 2), 0, 1)
    return np.sqrt(((dy - t * sy) ** 2 + (dx - t * sx) ** 2).min(axis=1))


def _contrail(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The strength profile (S, S) of one contrail and its mask."""
    length = rng.uniform(10, 34)
    angle = rng.uniform(0, np.pi)
    centre = rng.uniform(4, IMAGE_SIZE - 4, size=2)
    direction = np.array([np.cos(angle), np.sin(angle)])
    start, end = centre - direction * length / 2, centre + direction * length / 2
    bend = rng.normal(scale=0.08) * length                      # gentle curvature
    control = centre + bend * np.array([-direction[1], direction[0]])
    t = np.linspace(0, 1, 17)[:, None]
    curve = (1 - t) ** 2 * start + 2 * (1 - t) * t * control + t ** 2 * end
    y, x = np.mgrid[0:IMAGE_SIZE, 0:IMAGE_SIZE]
    pixels = np.stack([y.ravel(), x.ravel()], axis=1).astype(float)
    distance = _distance_to_polyline(pixels, curve).reshape(IMAGE_SIZE, IMAGE_SIZE)
    width = rng.uniform(0.5, 0.9)
    fade = np.interp(np.linspace(0, 1, 2), [0, 1], rng.uniform(0.6, 1.0, size=2))
    strength = rng.uniform(1.5, 3.5) * np.exp(-distance ** 2 / (2 * width ** 2))
    along = np.clip(((pixels - start) @ direction).reshape(IMAGE_SIZE, IMAGE_SIZE) / length, 0, 1)
    strength *= fade[0] + (fade[1] - fade[0]) * along            # one end fainter than the other
    return strength, distance <= 0.75


def generate_scenes(seed: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """`count` scenes: float16 images (count, S, S, 4) and uint8 masks (count, S, S)."""
    rng = np.random.default_rng(seed)
    surface = 255 + 12 * rng.normal(size=(count, 1, 1)) + 5 * smooth_fields(rng, count, 6.0)
    clouds = np.clip(smooth_fields(rng, count, 4.0) - rng.uniform(0.3, 2.0, size=(count, 1, 1)), 0, None)
    temperature = surface - 18 * clouds
    vapour = rng.uniform(0.5, 2.5, size=(count, 1, 1)) + 0.6 * smooth_fields(rng, count, 8.0)
    cirrus = np.clip(smooth_fields(rng, count, 3.0) - rng.uniform(1.0, 2.5, size=(count, 1, 1)), 0, None)
    cirrus *= rng.uniform(0.5, 2.0, size=(count, 1, 1))

    contrails = np.zeros((count, IMAGE_SIZE, IMAGE_SIZE))
    masks = np.zeros((count, IMAGE_SIZE, IMAGE_SIZE), dtype=np.uint8)
    for i in range(count):
        for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 3, 4])):
            strength, mask = _contrail(rng)
            contrails[i] = np.maximum(contrails[i], strength)
            masks[i] |= mask

    ice = (cirrus + contrails)[..., None] * COOLING
    clear = np.stack([temperature - 1.5, temperature + 0.4, temperature, temperature - vapour], axis=-1)
    images = clear - ice + rng.normal(scale=NOISE_K, size=clear.shape)
    return images.astype(np.float16), masks


def rle_encode(mask: np.ndarray) -> str:
    """Run-length encoding of a mask: "start length ..." with 1-based starts, row-major order."""
    flat = np.concatenate([[0], np.asarray(mask, dtype=np.uint8).ravel(), [0]])
    edges = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    starts, ends = edges[::2], edges[1::2]
    return " ".join(f"{s} {e - s}" for s, e in zip(starts, ends))


def write_split(train: tuple, test: tuple, public_dir: pathlib.Path, private_dir: pathlib.Path) -> None:
    """Write the public and private files from (ids, images, masks) of train and of test."""
    public_dir.mkdir(parents=True, exist_ok=True)
    private_dir.mkdir(parents=True, exist_ok=True)
    (train_ids, train_images, train_masks), (test_ids, test_images, test_masks) = train, test
    np.save(public_dir / "train_images.npy", train_images)
    np.save(public_dir / "train_masks.npy", train_masks)
    np.save(public_dir / "test_images.npy", test_images)
    pd.DataFrame({"record_id": train_ids}).to_csv(public_dir / "train.csv", index=False)
    pd.DataFrame({"record_id": test_ids}).to_csv(public_dir / "test.csv", index=False)
    pd.DataFrame({"record_id": test_ids, "encoded_pixels": [rle_encode(m) for m in test_masks]}).to_csv(
        private_dir / "answers.csv", index=False)


def make(public_dir: pathlib.Path, private_dir: pathlib.Path, seed: int, sample: int | None = None) -> None:
    """Lite variant: generate scenes, the first N_TRAIN for training, the rest for test.

    `sample` (mlabc check asks for one): about that many scenes, shared as the lite variant's are,
    in the same files."""
    n_train, n_test = N_TRAIN, N_TEST
    if sample is not None:
        n_test = min(N_TEST, max(1, sample * N_TEST // (N_TRAIN + N_TEST)))
        n_train = min(N_TRAIN, max(1, sample - n_test))
    images, masks = generate_scenes(seed, n_train + n_test)
    # 19-digit record ids, like the competition's
    ids = np.unique(np.random.default_rng(seed + 1).integers(10 ** 18, 9 * 10 ** 18, size=n_train + n_test))
    ids = np.random.default_rng(seed + 2).permutation(ids.astype(str))
    train = (ids[:n_train], images[:n_train], masks[:n_train])
    test = (ids[n_train:], images[n_train:], masks[n_train:])
    write_split(train, test, pathlib.Path(public_dir), pathlib.Path(private_dir))


def _read_records(folder: pathlib.Path, frame: int) -> tuple:
    """The labelled frame of bands 11, 13, 14, 15 and the mask of every record in a Kaggle folder."""
    ids, images, masks = [], [], []
    for record in sorted(p for p in folder.iterdir() if p.is_dir()):
        bands = [np.load(record / f"{band}.npy")[:, :, frame] for band in BANDS]
        ids.append(record.name)
        images.append(np.stack(bands, axis=-1).astype(np.float16))
        masks.append(np.load(record / "human_pixel_masks.npy")[:, :, 0].astype(np.uint8))
    return np.array(ids), np.stack(images), np.stack(masks)


def prepare_kaggle(raw_dir: pathlib.Path, public_dir: pathlib.Path, private_dir: pathlib.Path,
                   seed: int, frame: int = 4) -> None:
    """Full variant: the competition's train/ records for training and its labelled
    validation/ records as the test set, at the labelled frame (the fifth of eight).
    Needs memory for the arrays: about 10 GB for the 20,000 training records."""
    raw_dir = pathlib.Path(raw_dir)
    write_split(_read_records(raw_dir / "train", frame), _read_records(raw_dir / "validation", frame),
                pathlib.Path(public_dir), pathlib.Path(private_dir))
