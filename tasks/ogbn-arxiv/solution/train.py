"""Predict the subject area of papers in a citation graph, using more of the graph.

Reads nodes.csv (id, year, feature columns f0, f1, ...), edges.csv (source cites
target), train.csv (id, label) and test.csv (id) from the current directory.

Compared with the starter (own features + one step of neighbour averaging), each paper
is described by:
  * its own features and the averaged features of its neighbours one, two and three
    steps away (repeated averaging over the undirected citation graph);
  * the distribution of known labels among its neighbours, and among neighbours two
    steps away (labels of papers in the training set only; a paper's own label is
    never used to describe itself).
A logistic regression classifies it. Validation is done as the test is set up: fit on
older papers, measure on the newest labelled year, with the labels of that year hidden
from the label features. Then the model is refitted on every labelled paper and
submission.csv is written with the columns id and label.
"""

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

nodes = pd.read_csv("nodes.csv").set_index("id")
edges = pd.read_csv("edges.csv")
train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")

features = nodes[[c for c in nodes.columns if c.startswith("f")]].to_numpy()
row_of = pd.Series(np.arange(len(nodes)), index=nodes.index)
n = len(nodes)
n_classes = int(train["label"].max()) + 1

src, dst = row_of[edges["source"]].to_numpy(), row_of[edges["target"]].to_numpy()
both_ways = (np.r_[src, dst], np.r_[dst, src])
adjacency = sparse.coo_matrix((np.ones(2 * len(src)), both_ways), shape=(n, n)).tocsr()
adjacency.data[:] = 1.0  # duplicate citations count once
degree = np.asarray(adjacency.sum(axis=1)).ravel()
mean_op = sparse.diags(1.0 / np.maximum(degree, 1)) @ adjacency  # row-normalised averaging

hops = [features]
for _ in range(3):
    hops.append(mean_op @ hops[-1])
feature_block = np.hstack(hops + [np.log1p(degree)[:, None]])


def rows(ids):
    return row_of[ids].to_numpy()


def label_features(known):
    """Share of each class among known-label neighbours (1 and 2 steps), and how many are known."""
    one_hot = np.zeros((n, n_classes))
    one_hot[rows(known["id"]), known["label"].to_numpy()] = 1.0
    counts1 = adjacency @ one_hot
    known1 = counts1.sum(axis=1, keepdims=True)
    dist1 = counts1 / np.maximum(known1, 1)
    dist2 = mean_op @ dist1
    return np.hstack([dist1, dist2, np.log1p(known1)])


def build_model():
    return make_pipeline(StandardScaler(), LogisticRegression(C=0.5, max_iter=1000))


years = nodes.loc[train["id"], "year"].to_numpy()
newest = years.max()
fit, val = train[years < newest], train[years == newest]
X = np.hstack([feature_block, label_features(fit)])
model = build_model().fit(X[rows(fit["id"])], fit["label"])
accuracy = (model.predict(X[rows(val["id"])]) == val["label"].to_numpy()).mean()
print(f"Validation accuracy (papers of {newest}): {accuracy:.4f}")

# Refit on every labelled paper; the label features now use every known label.
X = np.hstack([feature_block, label_features(train)])
model = build_model().fit(X[rows(train["id"])], train["label"])
submission = pd.DataFrame({"id": test["id"], "label": model.predict(X[rows(test["id"])])})
submission.to_csv("submission.csv", index=False)
print(f"Wrote submission.csv with {len(submission)} rows")
