"""Normalised gradient descent (normalised LMS) on a polynomial basis."""

from __future__ import annotations

import numba
import numpy as np

from dolb.errors import ConfigError
from dolb.learners.base import Param, register
from dolb.learners.basis import POLYNOMIAL_PARAMS, PolynomialLearner


@register
class NGD(PolynomialLearner):
    """Normalised gradient descent with Tikhonov shrinkage, the gradient baseline of
    Buschermöhle et al., "The Incremental Risk Functional" (IEEE SMC 2013).

    θ_0 = 0; per example θ ← (1 − η·tikhonov)·θ + η (y − φᵀθ) φ / ‖φ‖², the residual
    y − φᵀθ taken with the θ that made the prediction. ‖φ‖² ≥ 1 because both bases have
    φ_0 = 1.

    Default η = 0.5: the update is the normalised LMS step (Nagumo & Noda 1967), stable
    for 0 < η < 2; η = 1 would fit the latest example exactly (the residual on it becomes
    0, so every update copies that example's noise), η = 0.5 halves that residual and
    averages the noise over the last few examples while still tracking quickly. The
    paper does not state its step size.

    Parameters
    ----------
    order, basis, domain_low, domain_high
        See :data:`dolb.learners.basis.POLYNOMIAL_PARAMS`.
    eta : float
        Step size η, 0 < η ≤ 2.
    tikhonov : float
        Shrinkage per update, 0 ≤ η·tikhonov ≤ 1 (default 0).

    Examples
    --------
    >>> learner = NGD(1, order=1, eta=1.0)
    >>> learner.learn(np.array([[1.0], [1.0]]), np.array([2.0, 2.0]))
    array([0., 2.])
    >>> learner.theta
    array([1., 1.])
    """

    name = "ngd"
    params = {
        **POLYNOMIAL_PARAMS,
        "eta": Param(0.5, above=0.0, high=2.0, doc="step size of the normalised update, 0 < eta <= 2"),
        "tikhonov": Param(0.0, low=0.0, doc="shrinkage: theta *= 1 - eta * tikhonov per update"),
    }

    @classmethod
    def check_params(cls, params):
        checked = super().check_params(params)
        if checked["eta"] * checked["tikhonov"] > 1.0:
            raise ConfigError(
                f"learner {cls.name!r}: eta * tikhonov must be at most 1 "
                f"(got {checked['eta'] * checked['tikhonov']!r})"
            )
        return checked

    def _learn(self, X, y):
        cfg = self.config
        return _ngd_block(self.features(X), y, self.theta, cfg["eta"], cfg["tikhonov"])


@numba.njit(cache=True)
def _ngd_block(Phi, y, theta, eta, tikhonov):
    """Run NGD over the block; update ``theta`` in place; return the predictions."""
    shrink = 1.0 - eta * tikhonov
    predictions = np.empty(y.shape[0])
    for t in range(y.shape[0]):
        phi = Phi[t]
        predictions[t] = phi @ theta
        step = eta * (y[t] - predictions[t]) / (phi @ phi)
        for i in range(theta.shape[0]):
            theta[i] = shrink * theta[i] + step * phi[i]
    return predictions
