"""Online subgradient descent with projection onto an L2 ball."""

from __future__ import annotations

import math

import numba

from dolb.learners.base import Param, register
from dolb.learners.linear import NORM2, SCALE, LinearLearner, moved_by, norm_after, scaled_row


@numba.njit(inline="always")  # not cached itself: compiled into the cached driver (linear/driver.py)
def _step(P, A, F, v, idx, val, start, nnz, y, p, dot, t, delta, direct):
    if 1.0 - y * p <= 0.0:
        return False, F[SCALE]
    s = F[SCALE]
    # the change into delta first: ‖v + Δ‖² is computed from it, then v moves
    scaled_row(v, delta, idx, val, start, nnz, P.eta0 / math.sqrt(t) * y / s, False)
    F[NORM2] = norm_after(v, idx, start, delta, nnz, F[NORM2])
    norm = abs(s) * math.sqrt(F[NORM2])
    return moved_by(v, delta, idx, start, nnz, direct), s / max(1.0, norm / P.radius)


@register
class OGD(LinearLearner):
    """Online (sub)gradient descent with projection (Zinkevich, "Online Convex Programming
    and Generalized Infinitesimal Gradient Ascent", ICML 2003) on the hinge loss over the
    L2 ball of radius D:

        w ← Π_D(w − η_t·z_t),  z_t = −y·x where y⟨w, x⟩ < 1 (else 0),  η_t = η_0/√t,

    Π_D(u) = u / max(1, ‖u‖/D), w_0 = 0. Conservative w.r.t. the hinge loss; the
    conversions' bounds use the 0-1 loss (C = 1), as the radius of the examples is not
    known.

    Parameters
    ----------
    radius : float
        D > 0. Default 10.
    eta0 : float
        η_0 > 0. Default 1.

    Examples
    --------
    >>> import numpy as np
    >>> learner = OGD(2, radius=1.0, eta0=2.0)
    >>> learner.learn(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([1.0, 1.0]))
    array([0., 0.])
    >>> learner.weights()
    array([0.57735027, 0.81649658])
    """

    name = "ogd"
    params = {
        "radius": Param(10.0, above=0.0, doc="radius D > 0 of the L2 ball"),
        "eta0": Param(1.0, above=0.0, doc="eta_0 > 0 of eta_t = eta_0 / sqrt(t)"),
    }
    step = _step
    bench_params = {"radius": 10.0, "eta0": 1.0}
    test_params = {"radius": 2.0, "eta0": 0.5}
