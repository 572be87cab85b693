"""Online manifold regularisation on the clusters of a random-projection tree."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numba
import numpy as np

from dolb.conversions.hypothesis import Hypothesis
from dolb.data.blocks import as_block
from dolb.learners.base import OnlineLearner, Param, register
from dolb.learners.kernel.kernels import EVALS, ROUNDS, from_dot, kernel_spec, squared_norm
from dolb.learners.kernel.learner import checked_block
from dolb.learners.linear import csr_parts
from dolb.learners.manifold.graph import (
    RISK,
    coefficient_step,
    instantaneous_risk,
    running_mean,
    values_at_representers,
)
from dolb.learners.manifold.learner import MR_PARAMS, online_risk, small_first_step, step_settings
from dolb.learners.manifold.rptree import RPTree, join, route

EDGE_WEIGHTS = ("mean", "expected")
"""How a cluster's edge to x_t is weighed: exp(−‖μ_i − x_t‖²/2σ²) at its mean (the
slides' simpler form), or its expectation over the cluster taken as N(μ_i, Σ_i) (the
slides' first form, with Σ_i the cluster's diagonal covariance)."""


@numba.njit(cache=True)
def mean_dots(tree, n, idx, val, out):
    """out[i] = μ_i·x for the first n cluster means (x's entries in ascending order)."""
    means = tree[4]
    for i in range(n):
        acc = 0.0
        for k in range(idx.shape[0]):
            acc += val[k] * means[i, idx[k]]
        out[i] = acc


@numba.njit(cache=True)
def refresh_gram(spec, tree, sq_means, gram, c):
    """‖μ_c‖² and row and column c of the means' Gram matrix, after μ_c moved; returns
    the number of kernel values computed."""
    means, n = tree[4], tree[6][1]
    sq_means[c] = squared_norm(means[c])
    for i in range(n):
        acc = 0.0
        for j in range(means.shape[1]):
            acc += means[c, j] * means[i, j]
        gram[c, i] = gram[i, c] = from_dot(spec, acc, sq_means[c], sq_means[i])
    return n


@numba.njit(cache=True)
def expected_edge(tree, i, x, width2):
    """E exp(−‖z − x‖²/2σ²) over z ~ N(μ_i, diag(v_i)), v_i cluster i's per-feature
    variance (``width2`` = σ²): Π_j (σ²/(σ² + v_ij))^½ exp(−(μ_ij − x_j)²/2(σ² + v_ij)),
    a product of one-dimensional Gaussian integrals; for v_i = 0 the edge at the mean."""
    means, counts, spread = tree[4], tree[3], tree[7]
    exponent = 0.0
    for j in range(x.shape[0]):
        widened = width2 + spread[i, j] / counts[i]
        exponent += 0.5 * math.log(width2 / widened) - (means[i, j] - x[j]) ** 2 / (2.0 * widened)
    return math.exp(exponent)


@numba.njit(cache=True)
def rptree_block(spec, edges, expected, P, indptr, indices, data, y, tree, beta, mean_beta, gram, sq_means, buffers,
                 I, F, pred):
    """Every row of a block: predict, add J_t(f_t) to F[RISK], take f_t into the average
    (``mean_beta``), step, route x to its cluster and forget it. Edges at the clusters'
    means, or (``expected``) their expectation over each cluster (:func:`expected_edge`)."""
    dense, row, weights, values = buffers
    counts = tree[3]
    width2 = 0.5 / edges.gamma
    for t in range(y.shape[0]):
        idx, val = indices[indptr[t]:indptr[t + 1]], data[indptr[t]:indptr[t + 1]]
        n = tree[6][1]
        sq_x = squared_norm(val)
        mean_dots(tree, n, idx, val, row)
        dense[:] = 0.0
        dense[idx] = val
        f = 0.0
        for i in range(n):
            if expected:  # an empty cluster (the first, before any point) weighs nothing
                weights[i] = counts[i] * expected_edge(tree, i, dense, width2) if counts[i] > 0 else 0.0
            else:
                weights[i] = counts[i] * from_dot(edges, row[i], sq_x, sq_means[i])
            row[i] = from_dot(spec, row[i], sq_x, sq_means[i])
            f += beta[i] * row[i]
        I[EVALS] += n
        I[ROUNDS] += 1
        pred[t] = f
        values_at_representers(gram, beta, n, values)
        F[RISK] += instantaneous_risk(P, f, y[t], beta, values, weights, n, 1.0)
        running_mean(beta, mean_beta, n, I[ROUNDS])
        new = coefficient_step(P, I[ROUNDS], f, y[t], beta, values, weights, n, 1.0)
        c = route(tree, idx, val)
        right = join(tree, c, dense)
        beta[c] += new
        if right >= 0:  # the clusters share c's coefficients as they share its points
            for coefficients in (beta, mean_beta):
                coefficients[right] = coefficients[c] * counts[right] / (counts[c] + counts[right])
                coefficients[c] -= coefficients[right]
            I[EVALS] += refresh_gram(spec, tree, sq_means, gram, right)
        I[EVALS] += refresh_gram(spec, tree, sq_means, gram, c)  # after right's: c's row is the last word
    return y.shape[0]


@numba.njit(cache=True)
def cluster_decision_values(spec, tree, beta, sq_means, indptr, indices, data, row, out):
    """f(x) = Σ_i β_i K(μ_i, x) for every row of a CSR block."""
    n = tree[6][1]
    for t in range(indptr.shape[0] - 1):
        idx, val = indices[indptr[t]:indptr[t + 1]], data[indptr[t]:indptr[t + 1]]
        sq_x = squared_norm(val)
        mean_dots(tree, n, idx, val, row)
        acc = 0.0
        for i in range(n):
            acc += beta[i] * from_dot(spec, row[i], sq_x, sq_means[i])
        out[t] = acc


@register
class OnlineMRRPTree(OnlineLearner):
    """Online manifold regularisation on a random-projection tree (Goldberg, Li & Zhu,
    "Online manifold regularization: a new learning setting and empirical study", ECML
    PKDD 2008): f_t = Σ_i β_i K(μ_i, ·) over the means μ_i of the clusters of an online
    random-projection tree (:mod:`.rptree`, at most ``max_clusters``, a leaf split at the
    median of a random direction when it holds ``leaf_size`` points).

    On round t, with the n clusters of counts n_i (Σ n_i = t − 1): predict f_t(x_t);
    the gradient step of :class:`~.exact.OnlineMR` with the representers μ_i, each edge
    weighing n_i·exp(−‖μ_i − x_t‖²/2σ²) (the points of the cluster it stands for; with
    ``edge_weight="expected"``, n_i times the expectation of exp(−‖z − x_t‖²/2σ²) over
    z ~ N(μ_i, Σ_i), Σ_i the cluster's diagonal covariance):
    β_i ← (1 − η_tλ₁) β_i − 2η_tλ₂ n_i (f_t(μ_i) − f_t(x_t)) w_it; the coefficient of
    K(x_t, ·), 2η_tλ₂ Σ_i n_i (f_t(μ_i) − f_t(x_t)) w_it + η_t (T/l) y_t [y_t given and
    y_t f_t(x_t) < 1], goes to the cluster x_t joins, whose mean then moves to take it in
    (when x_t makes its leaf split, the two clusters share the coefficient as they share
    the points). Then x_t is forgotten (kept in its leaf only while the tree may grow, for
    the median). The target of an unlabelled x_t is never read.

    Cost of round t: O(n·d) for the kernel row and the moved mean's Gram row, O(n²) for
    f at the means; memory O(max_clusters · (max_clusters + leaf_size · d)), whatever the
    stream's length. The split directions come from ``seed``.

    Examples
    --------
    >>> import numpy as np
    >>> learner = OnlineMRRPTree(1, max_clusters=2, leaf_size=2, gamma=1.0, sigma=1.0, lam1=0.1, lam2=1.0,
    ...                          eta=0.5, schedule="constant")
    >>> X, y = np.array([[0.0], [0.5], [1.0]]), np.array([1.0, np.nan, -1.0])
    >>> learner.learn(X, y, labelled=np.array([True, False, True])).round(4)
    array([0.    , 0.3894, 0.2723])
    >>> learner.centres().ravel(), learner.coefficients().round(4)
    (array([0.  , 0.75]), array([ 0.1346, -0.1833]))
    """

    name = "online_mr_rptree"
    task: ClassVar[str] = "binary"
    semi_supervised: ClassVar[bool] = True
    conversions_supported: ClassVar[tuple[str, ...]] = ("last", "average")
    complexity_param: ClassVar[str | None] = "gamma"
    params = {
        **MR_PARAMS,
        "max_clusters": Param(100, int, low=1, doc="most clusters (tree leaves), the representers"),
        "leaf_size": Param(20, int, low=2, doc="points at which a leaf splits at its median"),
        "seed": Param(0, int, low=0, doc="seed of the random split directions"),
        "edge_weight": Param("mean", str, choices=EDGE_WEIGHTS,
                             doc="edge to a cluster: w at its mean, or expected over it (diagonal Gaussian)"),
    }
    bench_params = None  # not yet measured against dolb bench's learners
    test_params = {"gamma": 2.0, "lam2": 0.1, "sigma": 0.5, "label_rate": 0.3, "max_clusters": 12, "leaf_size": 6}

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> dict[str, Any]:
        """The declared checks and :func:`~.learner.small_first_step`."""
        return small_first_step(cls.name, super().check_params(params))

    def __init__(self, n_features: int, n_train: int | None = None, conversions: tuple[str, ...] = ("last",),
                 **params: Any) -> None:
        super().__init__(n_features, n_train, conversions, **params)
        c = self.config
        self.P, self.edges = step_settings(c)
        self.spec = kernel_spec(c)
        size = c["max_clusters"]
        self.tree = RPTree(n_features, size, c["leaf_size"], c["seed"])
        self.beta, self.mean_beta = np.zeros(size), np.zeros(size)
        self.sq_means, self.gram = np.zeros(size), np.zeros((size, size))
        self.I = np.zeros(2, np.int64)  # kernel evaluations, rounds learned
        self.F = np.zeros(2)  # F[BIAS] unused, F[RISK] = Σ_t J_t(f_t)
        self._buffers = (np.zeros(n_features), np.zeros(size), np.zeros(size), np.zeros(size))

    @property
    def n_clusters(self) -> int:
        return self.tree.n_clusters

    def coefficients(self) -> np.ndarray:
        """β of the clusters, in cluster order (a copy)."""
        return self.beta[:self.n_clusters].copy()

    def centres(self) -> np.ndarray:
        """The clusters' means, one row each (a copy)."""
        return self.tree.means[:self.n_clusters].copy()

    def diagnostics(self) -> dict[str, float]:
        """Clusters, kernel evaluations, and the online risk (1/t) Σ J_t(f_t)."""
        return {"n_sv": float(self.n_clusters), "kernel_evals": float(self.I[EVALS]),
                "online_risk": online_risk(self.F, self.I)}

    def outputs(self) -> dict[str, Hypothesis]:
        """``last`` and, when asked for, ``average``: Σ_i β̄_i K(μ_i, ·) on the current
        means, β̄ the running mean of the coefficients β used on the rounds so far (a
        split shares β̄ like β). The means move as points join, so unlike the exact
        learner's this is not exactly (1/t) Σ_u f_u: it is the average coefficient on
        where each cluster is now."""
        out = {"last": Hypothesis(self.predict)}
        if "average" in self.conversions:
            snapshot = self.mean_beta.copy(), self.tree.arrays_copy(), self.sq_means.copy()
            out["average"] = Hypothesis(lambda X: self._decide(as_block(X, self.n_features), *snapshot))
        return out

    def state_nbytes(self) -> int:
        """Bytes of the tree and of the clusters' coefficients and Gram matrix."""
        return self.tree.nbytes + self.beta.nbytes + self.mean_beta.nbytes + self.sq_means.nbytes + self.gram.nbytes

    def _learn(self, X, y, labelled):
        indptr, indices, data, targets = checked_block(self.name, self.n_seen, X, y, labelled)
        pred = np.empty(targets.shape[0])
        expected = self.config["edge_weight"] == "expected"
        rptree_block(self.spec, self.edges, expected, self.P, indptr, indices, data, targets, self.tree.arrays,
                     self.beta, self.mean_beta, self.gram, self.sq_means, self._buffers, self.I, self.F, pred)
        return pred

    def _predict(self, X):
        return self._decide(X, self.beta, self.tree.arrays, self.sq_means)

    def _decide(self, X, beta: np.ndarray, tree: tuple, sq_means: np.ndarray) -> np.ndarray:
        """Σ_i β_i K(μ_i, x) for the rows of a checked block, over the clusters of
        ``tree`` (the tree's arrays, or a snapshot) and their squared norms."""
        indptr, indices, data, _ = csr_parts(X)
        out = np.zeros(indptr.shape[0] - 1)
        cluster_decision_values(self.spec, tree, beta, sq_means, indptr, indices, data, np.zeros(beta.shape[0]), out)
        return out
