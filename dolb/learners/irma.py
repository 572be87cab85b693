"""IRMA: minimisation of the incremental risk functional on a polynomial basis."""

from __future__ import annotations

import numba
import numpy as np

from dolb.errors import ConfigError
from dolb.learners.base import Param, register
from dolb.learners.basis import POLYNOMIAL_PARAMS, PolynomialLearner


@register
class IRMA(PolynomialLearner):
    """Incremental Risk Minimisation Algorithm of Buschermöhle et al., "The Incremental
    Risk Functional" (IEEE SMC 2013).

    Each update takes the function closest to the current one in L2(Ω) that also fits the
    new example, weighed by the stiffness λ_t:
    θ_{t+1} = argmin_θ ∫_Ω (φ(x)ᵀ(θ − θ_t))² dx + (y_t − φ_tᵀθ)² / λ_t, i.e.
    θ_{t+1} = θ_t + A⁻¹φ_t (y_t − φ_tᵀθ_t) / (λ_t + φ_tᵀA⁻¹φ_t),  A = ∫_Ω φφᵀ dx,
    Ω = [domain_low, domain_high], θ_0 = 0. λ_1 = ``stiffness`` for the first update,
    multiplied by ``stiffness_growth`` after every update (λ_t = stiffness·growth^(t−1)),
    so later examples move the function less. The result does not depend on the basis
    (only on the function space), but the monomial Gram matrix is badly conditioned
    (≈1e11 at order 7 on [0, 3]): A is factored once, A = LLᵀ, and A⁻¹φ is computed by
    two triangular solves; prefer ``basis = "legendre"``, whose A is diagonal.

    Parameters
    ----------
    order, basis, domain_low, domain_high
        See :data:`dolb.learners.basis.POLYNOMIAL_PARAMS`.
    stiffness : float
        λ for the first update, > 0.
    stiffness_growth : float
        Factor applied to λ after every update, > 0.

    Examples
    --------
    >>> learner = IRMA(1, order=0, stiffness=1.0)
    >>> learner.learn(np.array([[0.5], [0.5]]), np.array([2.0, 2.0]))
    array([0., 1.])
    >>> learner.stiffness
    1.1025
    """

    name = "irma"
    params = {
        **POLYNOMIAL_PARAMS,
        "stiffness": Param(0.1, above=0.0, doc="stiffness lambda of the first update (> 0)"),
        "stiffness_growth": Param(1.05, above=0.0, doc="factor on lambda after each update (> 0)"),
    }

    def __init__(self, n_features, n_train=None, **params):
        super().__init__(n_features, n_train, **params)
        try:
            self.cholesky = np.linalg.cholesky(self.basis.gram())
        except np.linalg.LinAlgError:
            raise ConfigError(
                f"learner {self.name!r}: the {self.basis.kind} Gram matrix of order "
                f"{self.basis.order} on {self.basis.domain} is numerically singular; "
                "use basis = 'legendre'"
            ) from None
        self.stiffness = self.config["stiffness"]

    def _learn(self, X, y):
        growth = self.config["stiffness_growth"]
        predictions, self.stiffness = _irma_block(
            self.features(X), y, self.theta, self.cholesky, self.stiffness, growth
        )
        return predictions


@numba.njit(cache=True)
def _irma_block(Phi, y, theta, L, stiffness, growth):
    """Run IRMA over the block with A = LLᵀ; update ``theta`` in place; return the
    predictions and the stiffness for the next update."""
    n = theta.shape[0]
    predictions = np.empty(y.shape[0])
    v = np.empty(n)
    for t in range(y.shape[0]):
        phi = Phi[t]
        predictions[t] = phi @ theta
        # v = A⁻¹φ: forward solve L w = φ, then back solve Lᵀ v = w.
        for i in range(n):
            acc = phi[i]
            for j in range(i):
                acc -= L[i, j] * v[j]
            v[i] = acc / L[i, i]
        for i in range(n - 1, -1, -1):
            acc = v[i]
            for j in range(i + 1, n):
                acc -= L[j, i] * v[j]
            v[i] = acc / L[i, i]
        step = (y[t] - predictions[t]) / (stiffness + phi @ v)
        for i in range(n):
            theta[i] += step * v[i]
        stiffness *= growth
    return predictions, stiffness
