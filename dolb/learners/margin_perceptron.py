"""The finite-horizon margin Perceptron."""

from __future__ import annotations

import math

import numba
import numpy as np

from dolb.errors import ConfigError, DataError
from dolb.learners.base import Param, register
from dolb.learners.linear import (
    NORM2,
    SCALE,
    LinearLearner,
    moved_by,
    norm_after,
    row_norms_squared,
    scaled_row,
)


@numba.njit(inline="always")  # not cached itself: compiled into the cached driver (linear/driver.py)
def _step(P, A, F, v, idx, val, start, nnz, y, p, dot, t, delta, direct):
    if 1.0 - y * p <= 0.0:
        return False, F[SCALE]
    s = F[SCALE]
    # the change into delta first: ‖v + Δ‖² is computed from it, then v moves
    scaled_row(v, delta, idx, val, start, nnz, y / (s * P.sqrt_m * P.radius), False)
    F[NORM2] = norm_after(v, idx, start, delta, nnz, F[NORM2])
    norm = abs(s) * math.sqrt(F[NORM2])
    return moved_by(v, delta, idx, start, nnz, direct), s / max(1.0, norm)


@register
class MarginPerceptron(LinearLearner):
    """The finite-horizon margin Perceptron of Dekel, "From Online to Batch Learning with
    Cutoff-Averaging" (NIPS 2008): knowing the horizon m (the number of training examples,
    ``n_train``) and a radius R ≥ max‖x‖, on every round with positive hinge loss
    ℓ = max(0, 1 − y⟨w, x⟩) it sets w' = w + y·x / (√m·R) and projects back onto the unit
    ball, w ← w' / max(1, ‖w'‖). w_0 = 0.

    It is conservative w.r.t. the hinge loss, which is the loss of its conversions' bounds;
    with ‖w‖ ≤ 1 and ‖x‖ ≤ R the hinge loss is at most C = 1 + R. An example with
    ‖x‖ > R (beyond a relative rounding slack of 1e-12 on ‖x‖²) is a DataError naming
    its row. Fed more than m examples it simply goes on with the same step.

    Parameters
    ----------
    radius : float
        R > 0, at least the largest norm of an example (default 1).

    Examples
    --------
    >>> import numpy as np
    >>> learner = MarginPerceptron(2, n_train=4, radius=1.0)
    >>> learner.learn(np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([1.0, 1.0]))
    array([0. , 0.5])
    >>> learner.weights()
    array([1., 0.])
    """

    name = "margin_perceptron"
    params = {"radius": Param(1.0, above=0.0, doc="R >= max ||x|| (> 0)")}
    derived_params = ("sqrt_m",)  # √m, m the horizon n_train
    bound_loss = "hinge"
    checks_rows = True  # every row within the radius, before any is learned
    step = _step
    bench_params = {"radius": 1.0001}  # rows of norm 1, up to float32 rounding
    test_params = {"radius": 1.0}

    def __init__(self, n_features, n_train=None, conversions=("last",), **params):
        if n_train is None:
            raise ConfigError(
                "learner 'margin_perceptron' needs the horizon: n_train (the number of "
                "training examples) was not given"
            )
        if int(n_train) < 1:
            raise ConfigError(f"learner 'margin_perceptron': n_train must be at least 1, got {n_train}")
        super().__init__(n_features, n_train, conversions, **params)

    def _derived_params(self):
        return {"sqrt_m": math.sqrt(int(self.n_train))}

    @property
    def loss_bound(self) -> float:
        return 1.0 + self.config["radius"]

    def _check_block(self, indptr, indices, data):
        radius = self.config["radius"]
        norms2 = row_norms_squared(indptr, data)
        # rounding slack: a row normalised to norm R must pass
        bad = np.flatnonzero(norms2 > radius * radius * (1.0 + 1e-12))
        if bad.size:
            row = int(bad[0])
            raise DataError(
                f"learner 'margin_perceptron': row {self.n_seen + row} has norm "
                f"{math.sqrt(norms2[row]):.6g} > radius {radius!r}"
            )
