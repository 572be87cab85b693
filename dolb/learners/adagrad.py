"""Diagonal AdaGrad."""

from __future__ import annotations

import math

import numba
import numpy as np

from dolb.learners.base import Param, register
from dolb.learners.linear import LOSS_PARAM, SCALE, LinearLearner, dloss, move


@numba.njit(inline="always")  # not cached itself: compiled into the cached driver (linear/driver.py)
def _step(P, A, F, v, idx, val, start, nnz, y, p, dot, t, delta, direct):
    eta, eps = P.eta, P.eps
    g = dloss(P.loss, y, p)
    if g == 0.0:
        return False, F[SCALE]
    G = A[0]
    s = F[SCALE]
    moved = False
    for j in range(nnz):
        gj = g * val[start + j]
        if gj == 0.0:  # an explicit zero of x: not one of its coordinates
            if move(v, delta, idx, start, j, 0.0, direct):
                moved = True
            continue
        k = idx[start + j]
        G[k] += gj * gj
        if move(v, delta, idx, start, j, -eta * gj / ((eps + math.sqrt(G[k])) * s), direct):
            moved = True
    return moved, s


@register
class AdaGrad(LinearLearner):
    """Diagonal AdaGrad (Duchi, Hazan & Singer, "Adaptive Subgradient Methods for Online
    Learning and Stochastic Optimization", JMLR 2011), unregularised:

        G_j ← G_j + g_j²,   w_j ← w_j − η·g_j / (ε + √G_j),   g = ℓ'(⟨w, x⟩, y)·x,

    per coordinate, touching only the coordinates of x. w_0 = 0, G_0 = 0. The
    conversions' bounds use the 0-1 loss (C = 1).

    Parameters
    ----------
    loss : {"hinge", "logistic"}
    eta : float
        η > 0. Default 0.1.
    eps : float
        ε ≥ 0 added to √G_j. Default 1e-8.

    Examples
    --------
    >>> import numpy as np
    >>> learner = AdaGrad(2, eta=1.0, eps=0.0)
    >>> learner.learn(np.array([[2.0, 0.0], [2.0, 0.0]]), np.array([1.0, 1.0]))
    array([0., 2.])
    >>> learner.weights()
    array([1., 0.])
    """

    name = "adagrad"
    params = {
        "loss": LOSS_PARAM,
        "eta": Param(0.1, above=0.0, doc="step size eta > 0"),
        "eps": Param(1e-8, low=0.0, doc="epsilon added to sqrt(G)"),
    }
    step = _step
    bench_params = {"eta": 0.1}
    test_params = {"eta": 0.5}

    def _arrays(self):
        return (np.zeros(self.n_features),)
