"""Forward pass of a 2-D convolution layer with ReLU, written with plain Python loops.

Reads the fixed batch in inputs.npz (images of shape (batch, height, width, channels),
kernels of shape (size, size, channels, filters), one bias per filter, the stride and
the zero padding), runs the layer once, saves the result to output.npy and prints how
long the forward pass took. The loops below are correct but slow.
"""

import time

import numpy as np


def relu(values):
    """Element-wise max(0, x)."""
    return np.maximum(values, 0.0)


def add_padding(images, padding):
    """Surround every image with `padding` rows and columns of zeros."""
    batch, height, width, channels = images.shape
    padded = np.zeros((batch, height + 2 * padding, width + 2 * padding, channels))
    padded[:, padding:padding + height, padding:padding + width, :] = images
    return padded


def dot_window(window, kernel, bias):
    """One output value: the window times the kernel, summed, plus the bias."""
    return np.sum(window * kernel) + bias


class Conv2D:
    """A convolution layer with given kernels and biases, followed by ReLU."""

    def __init__(self, kernels, biases, stride, padding):
        self.kernels = kernels  # (size, size, channels, filters)
        self.biases = biases  # (filters,)
        self.stride = stride
        self.padding = padding

    def forward(self, images):
        """Convolve every image with every filter, one output value at a time."""
        size, _, _, filters = self.kernels.shape
        padded = add_padding(images, self.padding)
        batch, padded_h, padded_w, _ = padded.shape
        out_h = (padded_h - size) // self.stride + 1
        out_w = (padded_w - size) // self.stride + 1
        output = np.zeros((batch, out_h, out_w, filters))
        for n in range(batch):
            for row in range(out_h):
                for col in range(out_w):
                    top = row * self.stride
                    left = col * self.stride
                    window = padded[n, top:top + size, left:left + size, :]
                    for f in range(filters):
                        output[n, row, col, f] = dot_window(window, self.kernels[:, :, :, f], self.biases[f])
        return relu(output)


if __name__ == "__main__":
    inputs = np.load("inputs.npz")
    layer = Conv2D(inputs["kernels"], inputs["biases"], int(inputs["stride"]), int(inputs["padding"]))
    start = time.perf_counter()
    result = layer.forward(inputs["images"])
    elapsed = time.perf_counter() - start
    np.save("output.npy", result)
    print(f"Output shape: {result.shape}")
    print(f"Forward pass time: {elapsed:.3f} s")
