import random


def make_rows(seed):
    """Rows of a synthetic regression problem."""
    rng = random.Random(seed)
    return [{"group": i % 5, "x": rng.random()} for i in range(100)]
