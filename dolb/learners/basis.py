"""Polynomial bases and the common ground of the polynomial regression learners.

The learners of the IRMA study (Buschermöhle et al., "The Incremental Risk Functional",
IEEE SMC 2013) fit f(x) = θᵀφ(x) with φ a polynomial basis of one input x. This module
holds the bases (:class:`PolynomialBasis`), the parameters the four learners share
(:data:`POLYNOMIAL_PARAMS`) and their base class (:class:`PolynomialLearner`), which
checks the parameters and the blocks, builds the basis and predicts.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.polynomial import legendre

from dolb.errors import ConfigError
from dolb.learners.base import OnlineLearner, Param

BASIS_KINDS = ("monomial", "legendre")


class PolynomialBasis:
    """Polynomials of degree 0..order in one variable on the domain [a, b].

    ``kind="monomial"``: φ_i(x) = x^i on the raw x. ``kind="legendre"``: φ_i(x) =
    P_i(u) with P_i the Legendre polynomial and u = (2x − a − b)/(b − a) mapping [a, b]
    onto [−1, 1]; this basis is orthogonal on [a, b]. Points outside [a, b] are allowed
    (the polynomials are simply evaluated there).

    Parameters
    ----------
    order : int
        Highest degree (the basis has ``order + 1`` functions).
    kind : {"monomial", "legendre"}
    domain : (float, float)
        The input domain (a, b), a < b, over which :meth:`gram` integrates.

    Examples
    --------
    >>> basis = PolynomialBasis(2, "legendre", domain=(0.0, 2.0))
    >>> basis.transform(np.array([0.0, 2.0]))
    array([[ 1., -1.,  1.],
           [ 1.,  1.,  1.]])
    >>> basis.gram()
    array([[2.        , 0.        , 0.        ],
           [0.        , 0.66666667, 0.        ],
           [0.        , 0.        , 0.4       ]])
    """

    def __init__(
        self, order: int, kind: str = "monomial", domain: tuple[float, float] = (0.0, 1.0)
    ) -> None:
        a, b = float(domain[0]), float(domain[1])
        if order < 0:
            raise ConfigError(f"polynomial order must be at least 0, got {order}")
        if kind not in BASIS_KINDS:
            raise ConfigError(f"basis {kind!r} is not one of {', '.join(BASIS_KINDS)}")
        if not b > a:
            raise ConfigError(f"domain upper end {b!r} must exceed its lower end {a!r}")
        self.order = int(order)
        self.kind = kind
        self.domain = (a, b)

    @property
    def size(self) -> int:
        """Number of basis functions, ``order + 1``."""
        return self.order + 1

    def transform(self, x: np.ndarray) -> np.ndarray:
        """The design matrix Φ, shape (len(x), order + 1), Φ[t, i] = φ_i(x_t)."""
        x = np.asarray(x, dtype=np.float64)
        if self.kind == "monomial":
            return np.vander(x, self.size, increasing=True)
        a, b = self.domain
        return np.ascontiguousarray(legendre.legvander((2.0 * x - a - b) / (b - a), self.order))

    def gram(self) -> np.ndarray:
        """A = ∫_a^b φ(x) φ(x)ᵀ dx, the exact un-normalised Gram matrix."""
        a, b = self.domain
        if self.kind == "monomial":
            power = np.add.outer(np.arange(self.size), np.arange(self.size)) + 1.0
            return (b**power - a**power) / power
        # ∫_{-1}^{1} P_i P_j du = 2/(2i+1) δ_ij and dx = (b − a)/2 du.
        return np.diag((b - a) / (2.0 * np.arange(self.size) + 1.0))


POLYNOMIAL_PARAMS: dict[str, Param] = {
    "order": Param(4, int, low=0, high=1000, doc="highest polynomial degree (complexity level; (order + 1)² state)"),
    "basis": Param("monomial", str, choices=BASIS_KINDS, doc="polynomial basis"),
    "domain_low": Param(0.0, doc="lower end of the input domain"),
    "domain_high": Param(1.0, doc="upper end of the input domain (above domain_low)"),
}
"""Parameters every polynomial learner has; a learner adds its own with
``params = {**POLYNOMIAL_PARAMS, ...}``."""


class PolynomialLearner(OnlineLearner):
    """Base of the regression learners on one input x through a :class:`PolynomialBasis`.

    Holds ``basis`` and the coefficients ``theta`` (zeros at start); predicts
    φ(x)ᵀθ. Subclasses implement ``_learn``, usually as
    ``kernel(self.features(X), y, <state arrays>)``.
    """

    task: ClassVar[str] = "regression"
    complexity_param: ClassVar[str | None] = "order"

    def __init__(self, n_features: int, n_train: int | None = None, **params: Any) -> None:
        super().__init__(n_features, n_train, **params)
        if self.n_features != 1:
            raise ConfigError(
                f"learner {self.name!r} fits a polynomial of one input, "
                f"got {self.n_features} features"
            )
        cfg = self.config
        domain = (cfg["domain_low"], cfg["domain_high"])
        self.basis = PolynomialBasis(cfg["order"], cfg["basis"], domain)
        self.theta = np.zeros(self.basis.size)

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> dict[str, Any]:
        checked = super().check_params(params)
        if not checked["domain_high"] > checked["domain_low"]:
            raise ConfigError(
                f"learner {cls.name!r}: domain_high ({checked['domain_high']!r}) must exceed "
                f"domain_low ({checked['domain_low']!r})"
            )
        return checked

    def features(self, X) -> np.ndarray:
        """Φ for a dense (n, 1) block of raw x values."""
        if sp.issparse(X):
            raise ValueError(
                f"learner {self.name!r} needs a dense block of x values, got a sparse matrix"
            )
        return self.basis.transform(X[:, 0])

    def _predict(self, X) -> np.ndarray:
        return self.features(X) @ self.theta
