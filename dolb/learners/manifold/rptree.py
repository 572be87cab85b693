"""An online random-projection tree (after Dasgupta & Freund, "Random projection trees
and low dimensional manifolds", STOC 2008) clustering a stream, compiled.

Every leaf is a cluster: its count, the mean of the points routed to it and, per
feature, the sum of their squared deviations from it (Welford's update; the cluster's
diagonal covariance is that over the count). A point goes
down from the root, left at an inner node when its projection on the node's direction
is at most the node's threshold, right otherwise. While the tree may still grow (fewer
than ``max_clusters`` leaves) a leaf keeps its points; when it holds ``leaf_size`` of
them it splits: along the next of the pre-drawn random unit directions, at the median of
its points' projections (the mean of the two middle ones for an even count), the points
going to the two new leaves by the routing rule, whose counts and means are theirs. The
left leaf keeps the cluster's number, the right one takes the next. Once the tree is
full no point is kept: the leaves only count and average. So at any time the leaves
partition the points seen, and memory is O(max_clusters · (leaf_size + 1) · d).

A dense and a CSR copy of a point project identically: the products are summed in
ascending column order, and a zero adds exactly nothing.
"""

from __future__ import annotations

import numba
import numpy as np

CHILDREN, SPLIT_OF, CLUSTER = range(3)
"""Columns of ``nodes`` (int64): first child (−1: a leaf; the second child follows it),
the split's direction (inner nodes), the cluster (leaves)."""


class RPTree:
    """The tree's arrays, for at most ``max_clusters`` leaves; the compiled code takes
    them as the tuple :attr:`arrays`. ``seed`` draws the split directions."""

    def __init__(self, n_features: int, max_clusters: int, leaf_size: int, seed: int) -> None:
        directions = np.random.default_rng(seed).normal(size=(max_clusters - 1, n_features))
        self.directions = directions / np.linalg.norm(directions, axis=1)[:, None]
        self.nodes = np.full((2 * max_clusters - 1, 3), -1, np.int64)
        self.nodes[0, CLUSTER] = 0
        self.thresholds = np.zeros(2 * max_clusters - 1)
        self.counts = np.zeros(max_clusters, np.int64)
        self.means = np.zeros((max_clusters, n_features))
        self.points = np.zeros((max_clusters, leaf_size, n_features))
        self.meta = np.array([1, 1], np.int64)  # nodes, clusters
        self.spread = np.zeros((max_clusters, n_features))  # Σ (x − μ)² per feature

    @property
    def arrays(self) -> tuple:
        return (self.directions, self.nodes, self.thresholds, self.counts, self.means, self.points, self.meta,
                self.spread)

    def arrays_copy(self) -> tuple:
        """A snapshot of :attr:`arrays` that later learning does not change."""
        return tuple(a.copy() for a in self.arrays)

    @property
    def n_clusters(self) -> int:
        return int(self.meta[1])

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays)

    def leaf_of(self, x: np.ndarray) -> int:
        """The cluster a dense point is routed to (for tests and inspection)."""
        idx = np.arange(x.shape[0], dtype=np.int32)
        return int(route(self.arrays, idx, np.ascontiguousarray(x, dtype=np.float64)))


@numba.njit(cache=True)
def route(tree, idx, val):
    """The cluster of the leaf a point (its entries) is routed to."""
    directions, nodes, thresholds = tree[0], tree[1], tree[2]
    node = 0
    while nodes[node, CHILDREN] >= 0:
        v = directions[nodes[node, SPLIT_OF]]
        projection = 0.0
        for k in range(idx.shape[0]):
            projection += val[k] * v[idx[k]]
        node = nodes[node, CHILDREN] + (0 if projection <= thresholds[node] else 1)
    return nodes[node, CLUSTER]


@numba.njit(cache=True)
def dense_projection(v, x):
    """v·x summed in ascending column order: bit for bit :func:`route`'s sum over x's
    stored entries."""
    acc = 0.0
    for j in range(x.shape[0]):
        acc += x[j] * v[j]
    return acc


@numba.njit(cache=True)
def split(tree, c):
    """Split cluster c's leaf (it holds leaf_size points, the tree is not full); returns
    the new cluster (the right leaf's)."""
    directions, nodes, thresholds, counts, means, points, meta, spread = tree
    n_nodes, right = meta[0], meta[1]
    node = 0
    while not (nodes[node, CHILDREN] < 0 and nodes[node, CLUSTER] == c):
        node += 1
    v = directions[right - 1]
    held = points[c].copy()
    projections = np.empty(held.shape[0])
    for i in range(held.shape[0]):
        projections[i] = dense_projection(v, held[i])
    threshold = np.median(projections)
    nodes[node, CHILDREN], nodes[node, SPLIT_OF], thresholds[node] = n_nodes, right - 1, threshold
    nodes[n_nodes, CLUSTER], nodes[n_nodes + 1, CLUSTER] = c, right
    meta[0], meta[1] = n_nodes + 2, right + 1
    counts[c] = counts[right] = 0
    means[c, :] = 0.0
    means[right, :] = 0.0
    for i in range(held.shape[0]):
        side = c if projections[i] <= threshold else right
        points[side, counts[side]] = held[i]
        counts[side] += 1
        means[side] += held[i]
    for side in (c, right):
        if counts[side] > 0:
            means[side] /= counts[side]
        spread[side, :] = 0.0
    for i in range(held.shape[0]):
        side = c if projections[i] <= threshold else right
        spread[side] += (held[i] - means[side]) ** 2
    return right


@numba.njit(cache=True)
def join(tree, c, x):
    """Add a dense point to cluster c: its count, mean and spread, and, while the tree
    may grow, its points (split at leaf_size). Returns the cluster created by a split, or −1."""
    _, _, _, counts, means, points, meta, spread = tree
    counts[c] += 1
    before = x - means[c]
    means[c] += before / counts[c]
    spread[c] += before * (x - means[c])
    if meta[1] == counts.shape[0]:
        return -1
    points[c, counts[c] - 1] = x
    return split(tree, c) if counts[c] == points.shape[1] else -1
