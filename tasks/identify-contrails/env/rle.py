"""Run-length encoding of masks, the format of the submission's encoded_pixels column.

A mask of shape (H, W) is flattened row by row (row-major, numpy's default order), and
every run of consecutive 1s is written as "start length", where start counts pixels from 1.
Example: the 3x3 mask
    0 1 1
    0 0 0
    1 0 0
flattens to 0 1 1 0 0 0 1 0 0 and encodes as "2 2 7 1". An empty mask encodes as "".
"""

import numpy as np


def rle_encode(mask):
    """Encode a 2-D mask of 0/1 (or False/True) values as "start length start length ..."."""
    flat = np.concatenate([[0], np.asarray(mask).astype(np.uint8).ravel(), [0]])
    edges = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    starts, ends = edges[::2], edges[1::2]
    return " ".join(f"{start} {end - start}" for start, end in zip(starts, ends))


def rle_decode(text, shape):
    """Decode "start length ..." back into a uint8 mask of the given (H, W) shape."""
    flat = np.zeros(shape[0] * shape[1], dtype=np.uint8)
    numbers = [int(n) for n in str(text).split()] if isinstance(text, str) else []
    for start, length in zip(numbers[::2], numbers[1::2]):
        flat[start - 1:start - 1 + length] = 1
    return flat.reshape(shape)


if __name__ == "__main__":
    example = np.array([[0, 1, 1], [0, 0, 0], [1, 0, 0]])
    assert rle_encode(example) == "2 2 7 1"
    assert (rle_decode("2 2 7 1", (3, 3)) == example).all()
    assert rle_encode(np.zeros((3, 3))) == ""
    print("rle.py: encode/decode round trip ok")
