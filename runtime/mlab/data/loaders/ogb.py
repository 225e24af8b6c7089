"""Open Graph Benchmark node property prediction (extra `ogb`): download, keep as arrays, write tables.

The download keeps node_feat.npy, edge_index.npy, labels.npy, node_year.npy (when the graph
has years) and split_<train|valid|test>.npy. The conversion writes, in the order of the
variant's public files: nodes (id, year, f0 ... f{D-1}), edges (source, target: the edge
index as OGB gives it, e.g. source cites target in ogbn-arxiv), train (id, label for OGB's
train and validation nodes) and test (id); private[0] holds the test ids and labels. Node
ids are a seeded permutation of OGB's node numbers, so an id says nothing of a paper's
place in the original ordering.
"""
from __future__ import annotations

from pathlib import Path

from mlab.errors import DataError, first_line
from mlab.installation import install_hint

INSTALL_HINT = install_hint("ogb")
ARRAYS = ("node_feat", "edge_index", "labels")


def load_ogb(name: str, root: Path):
    """OGB's dataset object for a node property prediction task (the one place importing ogb)."""
    try:
        from ogb.nodeproppred import NodePropPredDataset
    except ImportError:
        raise DataError(f"the ogb source needs the `ogb` package: {INSTALL_HINT}") from None
    return NodePropPredDataset(name=name, root=str(root))


def download(name: str, target: Path, where: str) -> None:
    """Download the graph and keep its arrays and split as .npy files in target."""
    import numpy as np

    from mlab.data.loaders.files import library_cache

    if not name.startswith("ogbn-"):
        raise DataError(f"only OGB node property prediction datasets (ogbn-*) are supported, "
                        f"not {name!r}; declare `prepare \"<task>/make_data.py:function\"` for others")
    try:
        dataset = load_ogb(name, library_cache("ogb"))
        graph, labels = dataset[0]
        split = dataset.get_idx_split()
    except DataError:
        raise
    except Exception as error:  # network, archive and format errors from ogb
        reason = first_line(error)
        raise DataError(f"downloading the OGB dataset {name!r} failed (is the network reachable?): "
                        f"{reason}") from None
    arrays = {"node_feat": graph["node_feat"], "edge_index": graph["edge_index"],
              "labels": np.asarray(labels).reshape(-1)}
    if graph.get("node_year") is not None:
        arrays["node_year"] = np.asarray(graph["node_year"]).reshape(-1)
    for part in ("train", "valid", "test"):
        arrays[f"split_{part}"] = np.asarray(split[part]).reshape(-1)
    for key, array in arrays.items():
        np.save(target / f"{key}.npy", np.asarray(array), allow_pickle=False)


def convert(folder: Path, variant, public: Path, private: Path, seed: int, where: str) -> None:
    """nodes, edges, train, test tables and the test answers (see the module docstring)."""
    import numpy as np
    import pandas as pd

    from mlab.data.loaders.files import require_files
    from mlab.data.splits import write_table

    names = require_files(variant, (".csv",) * 4, 4, "nodes, edges, train and test tables (.csv)", where)
    try:
        a = {key: np.load(folder / f"{key}.npy") for key in
             (*ARRAYS, "split_train", "split_valid", "split_test")}
        years = np.load(folder / "node_year.npy") if (folder / "node_year.npy").is_file() else None
    except (OSError, ValueError) as error:
        raise DataError(f"{where}: the download lacks an array of the graph ({error})") from None
    count = len(a["labels"])
    ids = np.random.default_rng(seed).permutation(count)
    id_column, answer = variant.id, variant.answers[0]
    nodes = pd.DataFrame(a["node_feat"].round(4), columns=[f"f{i}" for i in range(a["node_feat"].shape[1])])
    if years is not None:
        nodes.insert(0, "year", years)
    nodes.insert(0, id_column, ids)
    write_table(nodes.sort_values(id_column, kind="stable"), public / names[0])
    edges = pd.DataFrame({"source": ids[a["edge_index"][0]], "target": ids[a["edge_index"][1]]})
    write_table(edges, public / names[1])
    train_nodes = np.concatenate([a["split_train"], a["split_valid"]])
    train = pd.DataFrame({id_column: ids[train_nodes], answer: a["labels"][train_nodes].astype(np.int64)})
    write_table(train.sort_values(id_column), public / names[2])
    test = pd.DataFrame({id_column: ids[a["split_test"]], answer: a["labels"][a["split_test"]].astype(np.int64)})
    test = test.sort_values(id_column)
    write_table(test[[id_column]], public / names[3])
    write_table(test, private / variant.private[0])
