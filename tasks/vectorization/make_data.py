"""Generate the fixed input batch of the vectorization task and its reference output.

Writes inputs.npz (images, kernels, biases, stride, padding) into the public folder and
expected_output.npy (the layer's output, computed here without loops) into the private
folder, so a submitted script can be checked against a reference that does not depend on
the starter script. `make` sizes the batch so the looped starter runs in about 3.5 s on one
core (lite); `make_full` uses the shapes of the original benchmark task.
"""
from __future__ import annotations

import pathlib

import numpy as np

# (batch, height = width, channels, filters, kernel size, stride, padding)
LITE_SHAPE = (10, 64, 3, 24, 3, 1, 1)
FULL_SHAPE = (32, 64, 3, 8, 3, 2, 2)


def reference_forward(images, kernels, biases, stride, padding):
    """The convolution + ReLU the starter computes, as one tensor contraction."""
    padded = np.pad(images, ((0, 0), (padding, padding), (padding, padding), (0, 0)))
    size = kernels.shape[0]
    windows = np.lib.stride_tricks.sliding_window_view(padded, (size, size), axis=(1, 2))
    windows = windows[:, ::stride, ::stride]  # (batch, out_h, out_w, channels, kh, kw)
    out = np.einsum("bhwcij,ijcf->bhwf", windows, kernels, optimize=True) + biases
    return np.maximum(out, 0.0)


def write_inputs(public_dir: pathlib.Path, private_dir: pathlib.Path, seed: int, shape: tuple) -> None:
    """Draw the batch, kernels and biases for `shape` and write both files."""
    batch, side, channels, filters, kernel, stride, padding = shape
    rng = np.random.default_rng(seed)
    images = rng.standard_normal((batch, side, side, channels))
    kernels = rng.standard_normal((kernel, kernel, channels, filters)) * 0.3
    biases = rng.standard_normal(filters) * 0.1
    public_dir = pathlib.Path(public_dir)
    private_dir = pathlib.Path(private_dir)
    public_dir.mkdir(parents=True, exist_ok=True)
    private_dir.mkdir(parents=True, exist_ok=True)
    np.savez(public_dir / "inputs.npz", images=images, kernels=kernels, biases=biases,
             stride=np.int64(stride), padding=np.int64(padding))
    np.save(private_dir / "expected_output.npy", reference_forward(images, kernels, biases, stride, padding))


def make(public_dir: pathlib.Path, private_dir: pathlib.Path, seed: int) -> None:
    """Lite variant: inputs.npz (public) and expected_output.npy (private)."""
    write_inputs(public_dir, private_dir, seed, LITE_SHAPE)


def make_full(public_dir: pathlib.Path, private_dir: pathlib.Path, seed: int) -> None:
    """Full variant: the same files with the original task's shapes."""
    write_inputs(public_dir, private_dir, seed, FULL_SHAPE)
