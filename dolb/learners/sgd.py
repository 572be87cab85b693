"""Stochastic gradient descent on the hinge or logistic loss with L2 regularisation."""

from __future__ import annotations

import math

import numba

from dolb.errors import ConfigError
from dolb.learners.base import Param, register
from dolb.learners.linear import (
    LOSS_PARAM,
    SCALE,
    LinearLearner,
    choice_codes,
    dloss,
    scaled_row,
)

SCHEDULES = ("sqrt", "inverse")
SQRT, INVERSE = choice_codes(SCHEDULES, "sqrt", "inverse")


@numba.njit(inline="always")  # not cached itself: compiled into the cached driver (linear/driver.py)
def _step(P, A, F, v, idx, val, start, nnz, y, p, dot, t, delta, direct):
    alpha = P.alpha
    if P.schedule == SQRT:
        eta = P.eta0 / math.sqrt(t)
    else:
        eta = 1.0 / (alpha * t)
    g = dloss(P.loss, y, p)
    s = F[SCALE]
    shrink = 1.0 - eta * alpha
    # shrink is 0 only on round 1 (eta·alpha = 1), where w = 0: keep the scale.
    s_new = s * shrink if shrink > 0.0 else s
    if g == 0.0:  # v stays; the scale changes unless the shrink is 1
        return False, s_new
    return scaled_row(v, delta, idx, val, start, nnz, -eta * g / s_new, direct), s_new


@register
class SGD(LinearLearner):
    """Stochastic (sub)gradient descent on the L2-regularised hinge or logistic loss
    (Zhang, "Solving large scale linear prediction problems using stochastic gradient
    descent algorithms", ICML 2004; Shalev-Shwartz et al., "Pegasos", ICML 2007):

        w ← (1 − η_t·α)·w − η_t·ℓ'(⟨w, x_t⟩, y_t)·x_t,   w_0 = 0,

    the gradient taken at the w that made the prediction, η_t = η_0/√t (``"sqrt"``) or
    1/(α·t) (``"inverse"``), t = 1, 2, ... The hinge subgradient is −y where
    y⟨w, x⟩ < 1 and 0 elsewhere (0 at the kink). Averaged SGD (the average of the
    iterates, Polyak & Juditsky 1992) is this learner's ``average`` conversion.

    Equals scikit-learn's ``SGDClassifier(loss="hinge" / "log_loss", penalty="l2",
    alpha=α, fit_intercept=False, shuffle=False)`` with ``learning_rate="invscaling",
    eta0=η_0, power_t=0.5`` (sqrt) or, for α = 1 only, ``learning_rate="optimal"``
    (inverse); scikit-learn's hinge subgradient is −y also at the kink y⟨w, x⟩ = 1.

    With α > 0 (or the logistic loss) the hypothesis changes every round, so every
    hypothesis survives one round; the conversions' bounds use the 0-1 loss (C = 1).

    Parameters
    ----------
    loss : {"hinge", "logistic"}
    alpha : float
        L2 regularisation α ≥ 0 (> 0 for the inverse schedule). Default 1e-4.
    eta0 : float
        η_0 > 0 of the sqrt schedule, with η_0·α ≤ 1. Default 0.1.
    schedule : {"sqrt", "inverse"}

    Examples
    --------
    >>> import numpy as np
    >>> learner = SGD(2, alpha=0.0, eta0=0.5)
    >>> learner.learn(np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([1.0, 1.0]))
    array([0. , 0.5])
    >>> learner.weights()
    array([0.85355339, 0.        ])
    """

    name = "sgd"
    params = {
        "loss": LOSS_PARAM,
        "alpha": Param(1e-4, low=0.0, doc="L2 regularisation alpha >= 0"),
        "eta0": Param(0.1, above=0.0, doc="eta_0 > 0 of the sqrt schedule eta_t = eta_0 / sqrt(t)"),
        "schedule": Param("sqrt", str, choices=SCHEDULES, doc="sqrt: eta0/sqrt(t); inverse: 1/(alpha t)"),
    }
    step = _step
    bench_params = {"loss": "hinge", "alpha": 1e-5, "eta0": 0.1}
    test_params = {"loss": "hinge", "alpha": 0.01, "eta0": 0.5}

    @classmethod
    def check_params(cls, params):
        checked = super().check_params(params)
        if checked["schedule"] == "inverse":
            if not checked["alpha"] > 0:
                raise ConfigError(
                    f"learner {cls.name!r}, parameter 'alpha': must be above 0 for the inverse "
                    f"schedule 1/(alpha t), got {checked['alpha']!r}"
                )
        elif checked["eta0"] * checked["alpha"] > 1.0:
            raise ConfigError(
                f"learner {cls.name!r}: eta0 * alpha must be at most 1 (the L2 step would "
                f"flip w), got {checked['eta0'] * checked['alpha']!r}"
            )
        return checked
