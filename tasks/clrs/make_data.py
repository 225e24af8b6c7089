"""Generate the Floyd–Warshall pointer task of the CLRS benchmark as CSV tables.

Each graph is a weighted Erdős–Rényi graph in the style of the CLRS sampler (edges
present in both directions with probability p, each direction with its own weight).
For every ordered pair (i, j) the answer `pred` is the predecessor of j on the shortest
path from i to j; by the CLRS convention it is i itself when j == i or when j cannot be
reached from i. Training graphs are small, test graphs larger, so a model is scored on
graphs bigger than any it was trained on (out-of-distribution, as CLRS does).

Files: public train.csv (id, graph, num_nodes, i, j, weight, pred) and test.csv (the
same without pred), private answers.csv (id, pred). `weight` is the weight of the edge
i -> j, empty when there is no edge.

`make` writes the lite variant from its own generator (numpy only). `make_full` writes
the same files from the real CLRS-30 floyd_warshall samplers; it needs the `dm-clrs`
package (and its JAX dependencies) on the machine that prepares the data.
"""
from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd

LITE_TRAIN_GRAPHS = 800
LITE_TRAIN_SIZES = (5, 10)  # inclusive range of node counts
LITE_TEST_GRAPHS = 100
LITE_TEST_SIZE = 16
WEIGHT_STEPS = 10_000  # weights are multiples of 1/10000 in (0, 1], so sums compare exactly
FULL_SPLITS = {"train": (1000, 16, 1), "test": (32, 64, 3)}  # CLRS-30: samples, nodes, seed


def shortest_path_pointers(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Floyd–Warshall distances and predecessor pointers; weights[i, j] = inf for no edge."""
    n = weights.shape[0]
    dist = weights.copy()
    np.fill_diagonal(dist, 0)
    pred = np.repeat(np.arange(n)[:, None], n, axis=1)  # pred[i, j] = i to start with
    for k in range(n):
        through_k = dist[:, k:k + 1] + dist[k:k + 1, :]
        better = through_k < dist
        dist = np.where(better, through_k, dist)
        pred = np.where(better, pred[k:k + 1, :], pred)
    return dist, pred


def has_unique_paths(weights: np.ndarray, dist: np.ndarray) -> bool:
    """True when every reachable j != i has exactly one predecessor on a shortest path."""
    n = weights.shape[0]
    # through[i, j, k]: length of the best path i ~> k followed by the edge k -> j
    through = dist[:, None, :] + weights.T[None, :, :]
    with np.errstate(invalid="ignore"):  # inf - inf for unreachable pairs: NaN, never a match
        counts = (np.abs(through - dist[:, :, None]) < 0.5 / WEIGHT_STEPS).sum(axis=2)
    reachable = np.isfinite(dist) & ~np.eye(n, dtype=bool)
    return bool(np.all(counts[reachable] == 1))


def random_graph(rng: np.random.Generator, n: int) -> np.ndarray:
    """A weighted graph with edges in both directions; inf marks a missing edge."""
    p = rng.uniform(0.3, 0.6)
    upper = np.triu(rng.random((n, n)) < p, k=1)
    edges = upper | upper.T
    weights = rng.integers(1, WEIGHT_STEPS + 1, size=(n, n)) / WEIGHT_STEPS
    return np.where(edges, weights, np.inf)


def sample_graphs(rng: np.random.Generator, count: int, sizes: tuple[int, int]) -> list[tuple]:
    """`count` graphs with unambiguous shortest paths, as (weights, pointers) pairs."""
    graphs = []
    while len(graphs) < count:
        weights = random_graph(rng, int(rng.integers(sizes[0], sizes[1] + 1)))
        dist, pred = shortest_path_pointers(weights)
        if has_unique_paths(weights, dist):  # ties would make the answer depend on loop order
            graphs.append((weights, pred))
    return graphs


def pair_table(graphs: list[tuple], first_graph: int, first_id: int) -> pd.DataFrame:
    """One row per ordered pair (i, j) of every graph."""
    frames = []
    next_id = first_id
    for offset, (weights, pred) in enumerate(graphs):
        n = weights.shape[0]
        i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        w = weights.ravel()
        frames.append(pd.DataFrame({
            "id": np.arange(next_id, next_id + n * n),
            "graph": first_graph + offset,
            "num_nodes": n,
            "i": i.ravel(),
            "j": j.ravel(),
            "weight": np.where(np.isfinite(w), w, np.nan),
            "pred": pred.ravel(),
        }))
        next_id += n * n
    return pd.concat(frames, ignore_index=True)


def write_tables(public_dir: pathlib.Path, private_dir: pathlib.Path, train: list, test: list) -> None:
    """train.csv and test.csv into public_dir, answers.csv into private_dir."""
    public_dir = pathlib.Path(public_dir)
    private_dir = pathlib.Path(private_dir)
    public_dir.mkdir(parents=True, exist_ok=True)
    private_dir.mkdir(parents=True, exist_ok=True)
    train_rows = pair_table(train, first_graph=0, first_id=0)
    test_rows = pair_table(test, first_graph=len(train), first_id=len(train_rows))
    train_rows.to_csv(public_dir / "train.csv", index=False)
    test_rows.drop(columns=["pred"]).to_csv(public_dir / "test.csv", index=False)
    test_rows[["id", "pred"]].to_csv(private_dir / "answers.csv", index=False)


def make(public_dir: pathlib.Path, private_dir: pathlib.Path, seed: int, sample: int | None = None) -> None:
    """Lite variant: 800 training graphs of 5-10 nodes, 100 test graphs of 16 nodes.

    `sample` (mlabc check asks for one): graphs of the same sizes, only enough for about that
    many rows a table (at least one graph on each side), in the same files and columns."""
    rng = np.random.default_rng(seed)
    train_graphs, test_graphs = LITE_TRAIN_GRAPHS, LITE_TEST_GRAPHS
    if sample is not None:
        train_graphs = min(train_graphs, max(1, sample // (sum(LITE_TRAIN_SIZES) // 2) ** 2))
        test_graphs = min(test_graphs, max(1, sample // LITE_TEST_SIZE ** 2))
    train = sample_graphs(rng, train_graphs, LITE_TRAIN_SIZES)
    test = sample_graphs(rng, test_graphs, (LITE_TEST_SIZE, LITE_TEST_SIZE))
    write_tables(public_dir, private_dir, train, test)


def make_full(public_dir: pathlib.Path, private_dir: pathlib.Path, seed: int) -> None:
    """Full variant: the CLRS-30 floyd_warshall data (1000 train graphs of 16 nodes, 32 test of 64).

    Seed 0 draws exactly the CLRS-30 splits (sampler seeds 1 and 3); other seeds shift both.
    """
    try:
        import clrs  # the dm-clrs package; only the full variant needs it
    except ImportError:
        raise RuntimeError("the full clrs data is drawn with the CLRS benchmark's own sampler: "
                           "pip install dm-clrs on the machine that prepares the data") from None
    splits = {}
    for split, (samples, nodes, split_seed) in FULL_SPLITS.items():
        sampler, _ = clrs.build_sampler("floyd_warshall", num_samples=samples, length=nodes,
                                        seed=split_seed + seed)
        feedback = sampler.next()
        weights = next(point.data for point in feedback.features.inputs if point.name == "A")
        pointers = next(point.data for point in feedback.outputs if point.name == "Pi")
        graphs = []
        for g in range(samples):
            matrix = np.where(weights[g] != 0, weights[g], np.inf)  # CLRS marks a missing edge by 0
            np.fill_diagonal(matrix, np.inf)  # self-loops never lie on a shortest path
            graphs.append((matrix, np.asarray(pointers[g]).astype(int)))
        splits[split] = graphs
    write_tables(public_dir, private_dir, splits["train"], splits["test"])
