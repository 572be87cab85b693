"""The classic Perceptron."""

from __future__ import annotations

import numba

from dolb.learners.base import register
from dolb.learners.linear import SCALE, LinearLearner, scaled_row


@numba.njit(inline="always")  # not cached itself: compiled into the cached driver (linear/driver.py)
def _step(P, A, F, v, idx, val, start, nnz, y, p, dot, t, delta, direct):
    if y * p > 0.0:
        return False, F[SCALE]
    return scaled_row(v, delta, idx, val, start, nnz, y / F[SCALE], direct), F[SCALE]


@register
class Perceptron(LinearLearner):
    """The Perceptron (Rosenblatt, "The perceptron: a probabilistic model for information
    storage and organization in the brain", Psychological Review 1958).

    w_0 = 0; a mistake is y⟨w, x⟩ ≤ 0 (a zero score is a mistake), and then w ← w + y·x.
    It changes its hypothesis only on mistakes, so it is conservative w.r.t. the 0-1 loss,
    which is the loss of its conversions' bounds (C = 1). Same as scikit-learn's
    ``Perceptron(fit_intercept=False, shuffle=False, eta0=1)`` run for one pass.

    Examples
    --------
    >>> import numpy as np
    >>> learner = Perceptron(2)
    >>> learner.learn(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]), np.array([1.0, -1.0, 1.0]))
    array([ 0.,  1., -1.])
    >>> learner.weights()
    array([0., 0.])
    """

    name = "perceptron"
    params = {}
    step = _step
    bench_params = {}
    test_params = {}
