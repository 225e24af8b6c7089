"""Generate the lite data of the ogbn-arxiv task: a citation graph of papers to classify by subject.

The real task (OGB's ogbn-arxiv) is a directed graph of 169,343 computer-science
arXiv papers: each paper has a publication year and a 128-number feature vector
(averaged word embeddings of its title and abstract), each edge says that one
paper cites another, and the goal is to predict each paper's subject area
(40 classes).  Papers up to 2018 are labelled; the newest are to be predicted.

This generator grows a smaller graph with the same structure, year by year:

* subject areas (classes) belong to a few broad fields; their popularity drifts
  over the years, so the newest papers are not distributed like the old ones;
* a paper's features are a noisy view of its class's centroid (which also drifts
  a little with time), so features alone classify only part of the papers;
* every paper cites a handful of earlier papers, mostly of its own class, else
  mostly of its own field, chosen in proportion to how often they are already
  cited (rich get richer), so the graph carries much of the signal.

Files written (the layout a loader of the real data writes, with more feature columns):

* public/nodes.csv   id, year, f0 ... f{D-1}
* public/edges.csv   source, target   (paper `source` cites paper `target`)
* public/train.csv   id, label        for every paper published before the test years
* public/test.csv    id               for the papers of the newest years
* private/answers.csv id, label       for the test papers

Deterministic for a given seed.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd

FIRST_YEAR, LAST_YEAR = 2008, 2020
TEST_YEARS = 1                 # the newest year is the test set (about a fifth of the papers)
FIRST_YEAR_PAPERS = 62
GROWTH = 1.25                  # papers per year grow by this factor, as arXiv did
N_FIELDS, CLASSES_PER_FIELD = 5, 4
N_FEATURES = 32
FEATURE_SIGNAL = 0.25          # length of a class centroid relative to unit noise per feature
CENTROID_DRIFT = 0.01          # per-year drift of each centroid
POPULARITY_DRIFT = 0.08        # spread of per-year log growth rates of class popularity
CITE_SAME_CLASS, CITE_SAME_FIELD = 0.55, 0.25   # otherwise any earlier paper
MEAN_CITATIONS = 4.0


def _papers_per_year(scale: float = 1.0) -> dict[int, int]:
    return {year: max(1, round(scale * round(FIRST_YEAR_PAPERS * GROWTH ** (year - FIRST_YEAR))))
            for year in range(FIRST_YEAR, LAST_YEAR + 1)}


def _classes(rng: np.random.Generator, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each paper's year and class, in publication order, and the field of each class."""
    n_classes = N_FIELDS * CLASSES_PER_FIELD
    field_of = np.repeat(np.arange(N_FIELDS), CLASSES_PER_FIELD)
    base = rng.dirichlet(np.full(n_classes, 3.0))          # unequal class sizes
    growth = rng.normal(0.0, POPULARITY_DRIFT, size=n_classes)
    years, labels = [], []
    for year, count in _papers_per_year(scale).items():
        weights = base * np.exp(growth * (year - FIRST_YEAR))
        labels.append(rng.choice(n_classes, size=count, p=weights / weights.sum()))
        years.append(np.full(count, year))
    return np.concatenate(years), np.concatenate(labels), field_of


def _features(years: np.ndarray, labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    n_classes = labels.max() + 1
    centroids = rng.normal(size=(n_classes, N_FEATURES))
    centroids *= FEATURE_SIGNAL * np.sqrt(N_FEATURES) / np.linalg.norm(centroids, axis=1, keepdims=True)
    drift = rng.normal(0.0, CENTROID_DRIFT, size=(n_classes, N_FEATURES))
    elapsed = (years - FIRST_YEAR)[:, None]
    return centroids[labels] + drift[labels] * elapsed + rng.normal(size=(len(labels), N_FEATURES))


def _citations(labels: np.ndarray, field_of: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each paper cites earlier papers (in publication order): of its class, of its field, or any.

    The kind of each citation is drawn on its own, so most neighbourhoods are mixed.
    """
    cited_count = np.ones(len(labels))     # +1 so that uncited papers can be found
    shares = [CITE_SAME_CLASS, CITE_SAME_FIELD, 1.0 - CITE_SAME_CLASS - CITE_SAME_FIELD]
    edges = []
    for paper in range(1, len(labels)):
        earlier = np.arange(paper)
        pools = [earlier[labels[:paper] == labels[paper]],
                 earlier[field_of[labels[:paper]] == field_of[labels[paper]]],
                 earlier]
        wanted = rng.multinomial(1 + rng.poisson(MEAN_CITATIONS - 1), shares)
        chosen: set[int] = set()
        for pool, count in zip(pools, wanted):
            pool = np.array([p for p in pool if p not in chosen], dtype=np.int64)
            if count == 0 or len(pool) == 0:
                continue
            weights = cited_count[pool]
            picked = rng.choice(pool, size=min(count, len(pool)), replace=False, p=weights / weights.sum())
            chosen.update(int(p) for p in picked)
        for target in sorted(chosen):
            cited_count[target] += 1
            edges.append((paper, target))
    return np.array(edges, dtype=np.int64)


def make(public_dir: pathlib.Path, private_dir: pathlib.Path, seed: int, sample: int | None = None) -> None:
    """Write nodes.csv, edges.csv, train.csv and test.csv to public_dir, answers.csv to private_dir.

    `sample` (mlabc check asks for one): a graph of about that many papers over the same years,
    grown the same way, in the same files and columns."""
    public_dir, private_dir = pathlib.Path(public_dir), pathlib.Path(private_dir)
    rng = np.random.default_rng(seed)
    whole = sum(_papers_per_year().values())
    years, labels, field_of = _classes(rng, 1.0 if sample is None else min(1.0, sample / whole))
    features = _features(years, labels, rng)
    edges = _citations(labels, field_of, rng)

    # Node ids are shuffled so that an id reveals neither the year nor the class.
    ids = rng.permutation(len(labels))
    edges = ids[edges]
    nodes = pd.DataFrame(features.round(4), columns=[f"f{i}" for i in range(N_FEATURES)])
    nodes.insert(0, "year", years)
    nodes.insert(0, "id", ids)
    nodes = nodes.sort_values("id", kind="stable")

    is_test = years > LAST_YEAR - TEST_YEARS
    public_dir.mkdir(parents=True, exist_ok=True)
    private_dir.mkdir(parents=True, exist_ok=True)
    nodes.to_csv(public_dir / "nodes.csv", index=False)
    pd.DataFrame(edges[rng.permutation(len(edges))], columns=["source", "target"]).to_csv(
        public_dir / "edges.csv", index=False)
    pd.DataFrame({"id": ids[~is_test], "label": labels[~is_test]}).sort_values("id").to_csv(
        public_dir / "train.csv", index=False)
    test = pd.DataFrame({"id": ids[is_test], "label": labels[is_test]}).sort_values("id")
    test[["id"]].to_csv(public_dir / "test.csv", index=False)
    test.to_csv(private_dir / "answers.csv", index=False)
    return None
