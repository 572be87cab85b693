"""Dual averaging (lazy projection) onto an L2 ball."""

from __future__ import annotations

import math

import numba

from dolb.learners.base import Param, register
from dolb.learners.linear import NORM2, PHI, SCALE, LinearLearner, moved_by, norm_after, scaled_row


@numba.njit(inline="always")  # not cached itself: compiled into the cached driver (linear/driver.py)
def _step(P, A, F, v, idx, val, start, nnz, y, p, dot, t, delta, direct):
    eta = P.eta
    if 1.0 - y * p <= 0.0:
        return False, F[SCALE]
    phi = F[PHI]  # v = Φ·ψ, ψ = Σ y·x over the updates = −Σ z
    # the change into delta first: ‖v + Δ‖² is computed from it, then v moves
    scaled_row(v, delta, idx, val, start, nnz, phi * y, False)
    F[NORM2] = norm_after(v, idx, start, delta, nnz, F[NORM2])
    psi_norm = math.sqrt(F[NORM2]) / abs(phi)
    return moved_by(v, delta, idx, start, nnz, direct), eta / (phi * max(1.0, eta * psi_norm / P.radius))


@register
class DualAveraging(LinearLearner):
    """Dual averaging with lazy projection (Nesterov, "Primal-dual subgradient methods for
    convex problems", Math. Programming 2009; Zinkevich's lazy projection; Xiao, "Dual
    averaging methods for regularized stochastic learning", JMLR 2010) on the hinge loss
    over the L2 ball S of radius D:

        w_{t+1} = Π_S(−η·Σ_{i≤t} z_i),  z_i = −y_i·x_i where y_i⟨w_i, x_i⟩ < 1 (else 0),

    Π_S(u) = u / max(1, ‖u‖/D), constant η, w_0 = 0. The sum is kept as v (sparse
    updates) and ‖v‖² incrementally, so each example costs O(nnz). Conservative w.r.t.
    the hinge loss; the conversions' bounds use the 0-1 loss (C = 1).

    Parameters
    ----------
    radius : float
        D > 0. Default 10.
    eta : float
        η > 0. Default 0.1.

    Examples
    --------
    >>> import numpy as np
    >>> learner = DualAveraging(2, radius=1.0, eta=0.5)
    >>> learner.learn(np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]]), np.array([1.0, 1.0, 1.0]))
    array([0. , 0.5, 1. ])
    >>> learner.weights()
    array([1., 0.])
    """

    name = "dual_averaging"
    params = {
        "radius": Param(10.0, above=0.0, doc="radius D > 0 of the L2 ball"),
        "eta": Param(0.1, above=0.0, doc="constant step eta > 0"),
    }
    step = _step
    bench_params = {"radius": 10.0, "eta": 0.1}
    test_params = {"radius": 2.0, "eta": 0.3}

    def _initial_scale(self):
        return self.config["eta"]
