"""FTRL-Proximal with L1 and L2 regularisation."""

from __future__ import annotations

import math

import numba
import numpy as np

from dolb.learners.base import Param, register
from dolb.learners.linear import LOSSES, SCALE, LinearLearner, dloss, move


@numba.njit(inline="always")  # not cached itself: compiled into the cached driver (linear/driver.py)
def _step(P, A, F, v, idx, val, start, nnz, y, p, dot, t, delta, direct):
    alpha, beta, l1, l2 = P.alpha, P.beta, P.l1, P.l2
    g = dloss(P.loss, y, p)
    if g == 0.0:
        return False, F[SCALE]
    z = A[0]
    n = A[1]
    moved = False
    for j in range(nnz):
        gj = g * val[start + j]
        if gj == 0.0:  # an explicit zero of x: not one of its coordinates
            if move(v, delta, idx, start, j, 0.0, direct):
                moved = True
            continue
        k = idx[start + j]
        w = v[k]
        root = math.sqrt(n[k])
        n[k] += gj * gj
        new_root = math.sqrt(n[k])
        z[k] += gj - (new_root - root) / alpha * w
        zk = z[k]
        if abs(zk) <= l1:
            w_new = 0.0
        else:
            w_new = -(zk - math.copysign(l1, zk)) / ((beta + new_root) / alpha + l2)
        if move(v, delta, idx, start, j, w_new - w, direct):
            moved = True
    return moved, F[SCALE]


@register
class FTRL(LinearLearner):
    """FTRL-Proximal (McMahan et al., "Ad Click Prediction: a View from the Trenches",
    KDD 2013, Algorithm 1), per coordinate with L1 (λ1) and L2 (λ2) regularisation and
    per-coordinate learning rates α/(β + √n_j):

        g = ℓ'(⟨w, x⟩, y)·x;  for j in x: σ_j = (√(n_j + g_j²) − √n_j)/α,
        z_j ← z_j + g_j − σ_j·w_j,  n_j ← n_j + g_j²,
        w_j = 0 if |z_j| ≤ λ1 else −(z_j − sgn(z_j)·λ1) / ((β + √n_j)/α + λ2).

    w_j is a function of (z_j, n_j), which change only when x_j ≠ 0, so it is recomputed
    (lazily, as in the paper) only for the coordinates of x: O(nnz) per example. The
    paper's loss is the logistic loss (the default); the hinge loss is available. The
    conversions' bounds use the 0-1 loss (C = 1).

    Parameters
    ----------
    loss : {"logistic", "hinge"}
    alpha, beta : float
        Learning-rate parameters, α > 0, β ≥ 0. Defaults 0.1, 1.
    l1, l2 : float
        Regularisation λ1, λ2 ≥ 0. Defaults 0.

    Examples
    --------
    >>> import numpy as np
    >>> learner = FTRL(2, loss="hinge", alpha=1.0, beta=0.0)
    >>> learner.learn(np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([1.0, 1.0]))
    array([0., 1.])
    >>> learner.weights()
    array([1., 0.])
    """

    name = "ftrl"
    params = {
        "loss": Param("logistic", str, choices=LOSSES, doc="loss: logistic (paper) or hinge"),
        "alpha": Param(0.1, above=0.0, doc="alpha > 0 of the per-coordinate rate alpha/(beta + sqrt(n))"),
        "beta": Param(1.0, low=0.0, doc="beta >= 0 of the per-coordinate rate"),
        "l1": Param(0.0, low=0.0, doc="L1 regularisation lambda_1 >= 0"),
        "l2": Param(0.0, low=0.0, doc="L2 regularisation lambda_2 >= 0"),
    }
    step = _step
    bench_params = {"alpha": 0.1, "beta": 1.0, "l1": 1e-4}
    test_params = {"alpha": 0.5, "l1": 0.05}

    def _arrays(self):
        return (np.zeros(self.n_features), np.zeros(self.n_features))
