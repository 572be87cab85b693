"""Passive-Aggressive classifiers PA, PA-I and PA-II."""

from __future__ import annotations

import numba

from dolb.learners.base import Param, register
from dolb.learners.linear import SCALE, LinearLearner, choice_codes, scaled_row

VARIANTS = ("pa", "pa1", "pa2")
PA, PA1, PA2 = choice_codes(VARIANTS, "pa", "pa1", "pa2")


@numba.njit(inline="always")  # not cached itself: compiled into the cached driver (linear/driver.py)
def _step(P, A, F, v, idx, val, start, nnz, y, p, dot, t, delta, direct):
    C = P.C
    loss = 1.0 - y * p
    if loss <= 0.0:
        return False, F[SCALE]
    sq = 0.0
    for j in range(nnz):
        sq += val[start + j] * val[start + j]
    if P.variant == PA2:
        tau = loss / (sq + 0.5 / C)
    elif sq == 0.0:
        return False, F[SCALE]
    elif P.variant == PA1:
        tau = min(C, loss / sq)
    else:
        tau = loss / sq
    return scaled_row(v, delta, idx, val, start, nnz, tau * y / F[SCALE], direct), F[SCALE]


@register
class PassiveAggressive(LinearLearner):
    """Passive-Aggressive learning (Crammer, Dekel, Keshet, Shalev-Shwartz & Singer,
    "Online Passive-Aggressive Algorithms", JMLR 2006), binary classification.

    With the hinge loss ℓ = max(0, 1 − y⟨w, x⟩), on rounds with ℓ > 0:
    w ← w + τ·y·x, τ = ℓ/‖x‖² (``variant="pa"``), min(C, ℓ/‖x‖²) (``"pa1"``, PA-I) or
    ℓ/(‖x‖² + 1/(2C)) (``"pa2"``, PA-II). An all-zero example is skipped by PA and PA-I.
    w_0 = 0. Same as scikit-learn's ``SGDClassifier(loss="hinge", penalty=None,
    learning_rate="pa1"/"pa2", eta0=C, fit_intercept=False, shuffle=False)``.

    It is conservative w.r.t. the hinge loss, but the hinge loss of PA is not bounded, so
    its conversions' bounds use the 0-1 loss (C = 1).

    Parameters
    ----------
    variant : {"pa", "pa1", "pa2"}
        Default "pa1".
    C : float
        Aggressiveness, > 0 (not used by "pa"). Default 1.

    Examples
    --------
    >>> import numpy as np
    >>> learner = PassiveAggressive(2, variant="pa")
    >>> learner.learn(np.array([[2.0, 0.0], [2.0, 0.0]]), np.array([1.0, 1.0]))
    array([0., 1.])
    >>> learner.weights()
    array([0.5, 0. ])
    """

    name = "pa"
    params = {
        "variant": Param("pa1", str, choices=VARIANTS, doc="pa, pa1 (PA-I) or pa2 (PA-II)"),
        "C": Param(1.0, above=0.0, doc="aggressiveness C > 0 of PA-I and PA-II"),
    }
    step = _step
    bench_params = {"variant": "pa1", "C": 1.0}
    test_params = {"variant": "pa1", "C": 0.5}
