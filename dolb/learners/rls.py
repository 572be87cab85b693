"""Recursive least squares with a forgetting factor on a polynomial basis."""

from __future__ import annotations

import numba
import numpy as np

from dolb.errors import ConfigError
from dolb.learners.base import Param, register
from dolb.learners.basis import POLYNOMIAL_PARAMS, PolynomialBasis, PolynomialLearner

RELATIVE_TIKHONOV_FLOOR = 1e-10
"""The smallest safe tikhonov relative to the basis's scale (see :func:`smallest_tikhonov`)."""


def smallest_tikhonov(basis: PolynomialBasis) -> float:
    """The smallest tikhonov RLS computes accurately with ``basis``:
    1e-10 · max_x ‖φ(x)‖² / (order + 1) over the domain [a, b].

    S_0 = I / tikhonov makes the first update subtract two numbers of size
    ‖φ‖²/tikhonov to get one of size 1: about ε·‖φ‖²/tikhonov of relative accuracy is
    lost in S, and θ follows. Measured against a batch ridge solve (docs/studies/irma.md, "RLS's
    smallest safe Tikhonov"): at this floor RLS's fit agrees to 1e-6 or better for both
    bases, orders 2 to 10 and domains [0, 1] to [0, 10]; ten times below it, to 2e-5 at
    worst. The scale is 1 for the Legendre basis and Σ_i m^(2i)/(order + 1) for
    monomials, m = max(|a|, |b|): both bases reach their largest norm at an end of the
    domain.

    Examples
    --------
    >>> smallest_tikhonov(PolynomialBasis(4, "legendre", (0.0, 3.0)))
    1e-10
    >>> float(f"{smallest_tikhonov(PolynomialBasis(2, 'monomial', (0.0, 3.0))):.3g}")
    3.03e-09
    """
    ends = basis.transform(np.array(basis.domain))
    return RELATIVE_TIKHONOV_FLOOR * float((ends**2).sum(axis=1).max()) / basis.size


@register
class RLS(PolynomialLearner):
    """Recursive least squares with forgetting factor g, the second-order baseline of
    Buschermöhle et al., "The Incremental Risk Functional" (IEEE SMC 2013); the
    recursion is the exponentially weighted RLS of Haykin, "Adaptive Filter Theory".

    θ_0 = 0, S_0 = I / tikhonov; per example
    k = Sφ / (g + φᵀSφ),  θ ← θ + k (y − φᵀθ),  S ← (S − kφᵀS) / g.

    The Tikhonov term enters through S_0 (the paper gives S_0 = I, i.e. tikhonov = 1):
    then S_t⁻¹ = tikhonov·g^t·I + Σ_{i≤t} g^{t−i} φ_iφ_iᵀ and θ_t exactly minimises
    Σ_{i≤t} g^{t−i} (y_i − φ_iᵀθ)² + tikhonov·g^t·‖θ‖², so the regulariser is forgotten
    at the same rate as the data. S is updated as S − (Sφ)(Sφ)ᵀ/(g + φᵀSφ), which keeps
    it exactly symmetric.

    Parameters
    ----------
    order, basis, domain_low, domain_high
        See :data:`dolb.learners.basis.POLYNOMIAL_PARAMS`.
    forgetting : float
        Forgetting factor g, 0 < g ≤ 1 (1: ordinary regularised least squares).
    tikhonov : float
        Initial ridge weight, at least :func:`smallest_tikhonov` of the basis (1e-10
        for Legendre polynomials; smaller values are refused: the recursion would lose
        its accuracy).

    Examples
    --------
    >>> learner = RLS(1, order=1, tikhonov=1e-8)
    >>> learner.learn(np.array([[0.0], [1.0], [2.0]]), np.array([1.0, 3.0, 5.0])).round(6)
    array([0., 1., 5.])
    >>> learner.theta.round(6)
    array([1., 2.])
    """

    name = "rls"
    params = {
        **POLYNOMIAL_PARAMS,
        "forgetting": Param(1.0, above=0.0, high=1.0, doc="forgetting factor g, 0 < g <= 1"),
        "tikhonov": Param(
            1.0, above=0.0, doc="ridge weight: S_0 = I / tikhonov (>= 1e-10 x the basis's scale, see smallest_tikhonov)"
        ),
    }

    @classmethod
    def check_params(cls, params):
        """Also refuses a tikhonov below :func:`smallest_tikhonov` of the basis."""
        checked = super().check_params(params)
        basis = PolynomialBasis(checked["order"], checked["basis"], (checked["domain_low"], checked["domain_high"]))
        floor = smallest_tikhonov(basis)
        if checked["tikhonov"] < floor:
            raise ConfigError(
                f"learner {cls.name!r}, parameter 'tikhonov': {checked['tikhonov']!r} is below {floor:.3g}, the "
                f"smallest value RLS computes accurately with this basis (S_0 = I / tikhonov: the recursion "
                f"loses about 1e-16 x max|phi|^2 / tikhonov of its accuracy)"
            )
        return checked

    def __init__(self, n_features, n_train=None, **params):
        super().__init__(n_features, n_train, **params)
        self.S = np.eye(self.basis.size) / self.config["tikhonov"]

    def _learn(self, X, y):
        return _rls_block(self.features(X), y, self.theta, self.S, self.config["forgetting"])


@numba.njit(cache=True)
def _rls_block(Phi, y, theta, S, g):
    """Run RLS over the block; update ``theta`` and ``S`` in place; return the predictions."""
    n = theta.shape[0]
    predictions = np.empty(y.shape[0])
    for t in range(y.shape[0]):
        phi = Phi[t]
        predictions[t] = phi @ theta
        s_phi = S @ phi
        denominator = g + phi @ s_phi
        step = (y[t] - predictions[t]) / denominator
        for i in range(n):
            theta[i] += step * s_phi[i]
            for j in range(n):
                S[i, j] = (S[i, j] - s_phi[i] * s_phi[j] / denominator) / g
    return predictions
