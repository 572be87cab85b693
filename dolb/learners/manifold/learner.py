"""The base class of the online manifold regularisation learners: their parameters, the
Gram matrix of their representers beside the kernel learners' store, and the
semi-supervised block loop."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from dolb.conversions.hypothesis import Hypothesis
from dolb.data.blocks import as_block
from dolb.errors import ConfigError
from dolb.learners.base import Param
from dolb.learners.kernel.kernels import ALPHA, KERNEL_PARAMS, MEAN, RBF, ROUNDS, KernelSpec
from dolb.learners.kernel.learner import KernelLearner
from dolb.learners.kernel.norma import SCHEDULES
from dolb.learners.manifold.graph import RISK, StepParams, omr_block

MR_PARAMS = {
    **KERNEL_PARAMS,
    "lam1": Param(0.01, above=0.0, doc="lambda_1: weight of the RKHS norm |f|^2 / 2"),
    "lam2": Param(0.01, above=0.0, doc="lambda_2: weight of the graph term sum_i (f(x_i) - f(x_t))^2 w_it"),
    "sigma": Param(0.5, above=0.0, doc="edge width sigma: w_it = exp(-|x_i - x_t|^2 / (2 sigma^2))"),
    "eta": Param(0.5, above=0.0, doc="step size eta_0 (eta_0 / sqrt(t) or constant)"),
    "schedule": Param("sqrt", str, choices=SCHEDULES, doc="step schedule: eta_0 / sqrt(t), or constant eta_0"),
    "label_rate": Param(1.0, above=0.0, high=1.0,
                        doc="l/T, the stream's label rate: the hinge loss of a labelled example weighs T/l"),
}
"""The parameters every online manifold regularisation learner declares."""


def small_first_step(name: str, checked: dict[str, Any]) -> dict[str, Any]:
    """``checked``, or ConfigError unless η_1 λ₁ = eta·lam1 < 1 (else the first shrink
    flips the sign of every coefficient); part of the learners' ``check_params``, so a
    pipeline is refused before anything runs."""
    if checked["eta"] * checked["lam1"] >= 1.0:
        raise ConfigError(f"learner {name!r}, parameter 'lam1': eta * lam1 must be below 1, "
                          f"got {checked['eta'] * checked['lam1']!r}")
    return checked


def step_settings(config: dict[str, Any]) -> tuple[StepParams, KernelSpec]:
    """The compiled step's parameters (no buffer unless ``config`` has one) and the RBF
    spec of the edge weights (γ = 1/2σ²) from a learner's checked parameters."""
    c = config
    P = StepParams(c["lam1"], c["lam2"], c["eta"], c["schedule"] == "sqrt", 1.0 / c["label_rate"],
                   c.get("buffer", 0), c.get("keep_labelled", False))
    return P, KernelSpec(RBF, 0.5 / c["sigma"] ** 2, 1, 0.0)


class ManifoldLearner(KernelLearner):
    """Base class of the online manifold regularisation learners (labels −1/+1, the
    targets of unlabelled rows never read): the step of :mod:`.graph` on every example,
    labelled or not, from f_1 = 0, no bias. A subclass that declares the parameters
    ``buffer`` and ``keep_labelled`` keeps a buffer; without them every example is kept.

    Besides the kernel learners' store it holds the Gram matrix of the representers
    (capacity², float64) and three arrays of the capacity.
    """

    semi_supervised: ClassVar[bool] = True
    conversions_supported: ClassVar[tuple[str, ...]] = ("last", "average")

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> dict[str, Any]:
        """The declared checks and :func:`small_first_step`."""
        return small_first_step(cls.name, super().check_params(params))

    def __init__(self, n_features: int, n_train: int | None = None, conversions: tuple[str, ...] = ("last",),
                 **params: Any) -> None:
        super().__init__(n_features, n_train, conversions, **params)
        self.P, self.edges = step_settings(self.config)
        self.gram = np.zeros((0, 0))
        self._weights = np.zeros(0)
        self._values = np.zeros(0)

    def _grow(self, nnz: int) -> None:
        super()._grow(nnz)
        capacity, n = self.store.capacity, self.store.n
        if self.gram.shape[0] < capacity:
            gram = np.zeros((capacity, capacity))
            gram[:n, :n] = self.gram[:n, :n]
            self.gram = gram
            self._weights, self._values = np.zeros(capacity), np.zeros(capacity)

    def state_nbytes(self) -> int:
        """Bytes of the representers' storage and of their Gram matrix."""
        return super().state_nbytes() + self.gram.nbytes

    def diagnostics(self) -> dict[str, float]:
        """Representers held, kernel evaluations, and the online risk (1/t) Σ J_t(f_t)."""
        return {**super().diagnostics(), "online_risk": online_risk(self.F, self.I)}

    def outputs(self) -> dict[str, Hypothesis]:
        """``last`` (f_{t+1}) and, when asked for, ``average``: f̄ = (1/t) Σ_{u ≤ t} f_u
        (see :mod:`.graph`), a snapshot that later learning does not change."""
        out = {"last": Hypothesis(self.predict)}
        if "average" in self.conversions:
            averaged = None
            if self.store is not None:  # a copy of the store with ᾱ in place of α
                averaged = tuple(array.copy() for array in self.store.arrays)
                averaged[5][:, ALPHA] = averaged[5][:, MEAN]
            out["average"] = Hypothesis(lambda X: self._decide(as_block(X, self.n_features), averaged))
        return out

    def _learn(self, X, y, labelled):
        return self._run_all(X, y, self.n_seen + np.arange(y.shape[0], dtype=np.int64), labelled)

    def _run(self, indptr, indices, data, y, ids, t, pred):
        buffers = (self._work, self._row, self._weights, self._values)
        return omr_block(self.spec, self.edges, self.P, indptr, indices, data, y, ids, t, self.store.arrays,
                         self.gram, buffers, self.I, self.F, pred)


def online_risk(F: np.ndarray, I: np.ndarray) -> float:
    """(1/t) Σ_{u ≤ t} J_u(f_u) after t rounds (NaN before the first)."""
    return float(F[RISK] / I[ROUNDS]) if I[ROUNDS] else float("nan")
