"""Forward pass of a 2-D convolution layer with ReLU, vectorised with numpy.

Reads the fixed batch in inputs.npz (images of shape (batch, height, width, channels),
kernels of shape (size, size, channels, filters), one bias per filter, the stride and
the zero padding), runs the layer once, saves the result to output.npy and prints how
long the forward pass took.

Instead of visiting every image, output position and filter in Python loops, the layer
takes a strided view of every window of the padded batch (no copy) and contracts all
windows with all filters in one tensordot, a single matrix product over the window's
rows, columns and channels. The arithmetic is the same, so the output equals the looped
version's up to floating-point rounding.
"""

import time

import numpy as np


def relu(values):
    """Element-wise max(0, x)."""
    return np.maximum(values, 0.0)


def add_padding(images, padding):
    """Surround every image with `padding` rows and columns of zeros (as float64, like the loops)."""
    pad = ((0, 0), (padding, padding), (padding, padding), (0, 0))
    return np.pad(images.astype(np.float64), pad)


class Conv2D:
    """A convolution layer with given kernels and biases, followed by ReLU."""

    def __init__(self, kernels, biases, stride, padding):
        self.kernels = kernels  # (size, size, channels, filters)
        self.biases = biases  # (filters,)
        self.stride = stride
        self.padding = padding

    def forward(self, images):
        """Convolve every image with every filter at once."""
        size = self.kernels.shape[0]
        padded = add_padding(images, self.padding)
        # windows[n, row, col, c, i, j] = padded[n, row + i, col + j, c], a view, no copy
        windows = np.lib.stride_tricks.sliding_window_view(padded, (size, size), axis=(1, 2))
        windows = windows[:, ::self.stride, ::self.stride]
        # sum over channels c and window offsets i, j: (n, row, col, c, i, j) x (i, j, c, f)
        output = np.tensordot(windows, self.kernels, axes=([3, 4, 5], [2, 0, 1]))
        return relu(output + self.biases)


if __name__ == "__main__":
    inputs = np.load("inputs.npz")
    layer = Conv2D(inputs["kernels"], inputs["biases"], int(inputs["stride"]), int(inputs["padding"]))
    start = time.perf_counter()
    result = layer.forward(inputs["images"])
    elapsed = time.perf_counter() - start
    np.save("output.npy", result)
    print(f"Output shape: {result.shape}")
    print(f"Forward pass time: {elapsed:.3f} s")
