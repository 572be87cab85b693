"""NORMA: stochastic gradient descent in a reproducing-kernel Hilbert space."""

from __future__ import annotations

import math

import numba

from dolb.errors import ConfigError
from dolb.learners.base import Param, register
from dolb.learners.kernel.kernels import (
    ALPHA,
    BIAS,
    KERNEL_PARAMS,
    ROUNDS,
    add_row,
    has_room,
    remove_oldest,
    remove_slot,
    scored_row,
)
from dolb.learners.kernel.learner import KernelLearner
from dolb.learners.linear import choice_codes

SCHEDULES = ("sqrt", "constant")
SQRT, CONSTANT = choice_codes(SCHEDULES, "sqrt", "constant")


@numba.njit(cache=True)
def norma_block(spec, P, indptr, indices, data, y, ids, start, store, F, I, work, row, pred):
    """Run rows start.. of a block (``P``: λ, η, schedule code, tolerance, budget, offset);
    returns where it stopped (the end, or a row that needs room in the store)."""
    lam, eta, schedule, tol, budget, offset = P
    alpha = store[5][:, ALPHA]
    meta = store[7]
    for t in range(start, y.shape[0]):
        idx, val = indices[indptr[t]:indptr[t + 1]], data[indptr[t]:indptr[t + 1]]
        if not has_room(store, idx.shape[0]):
            return t
        n, sq_x, f = scored_row(spec, store, idx, val, work, row, I)
        f += F[BIAS]
        pred[t] = f
        step = eta / math.sqrt(I[ROUNDS]) if schedule == SQRT else eta
        alpha[:n] *= 1.0 - step * lam
        if y[t] * f < 1.0:
            s = add_row(spec, store, idx, val, sq_x, ids[t])
            alpha[s] = step * y[t]
            if offset:
                F[BIAS] += step * y[t]
        for s in range(meta[0] - 1, -1, -1):
            if abs(alpha[s]) < tol:
                remove_slot(store, s)
        while 0 < budget < meta[0]:
            remove_oldest(store)
    return y.shape[0]


@register
class Norma(KernelLearner):
    """NORMA (Kivinen, Smola & Williamson, "Online learning with kernels", IEEE Trans.
    Signal Processing 2004): stochastic gradient descent on the regularised hinge loss
    λ/2‖f‖² + max(0, 1 − y·f(x)) in the kernel's feature space, with truncation.

    On round t (t = 1, 2, ... counting learned examples), with step η_t = eta / √t
    (``schedule="sqrt"``) or η_t = eta (``"constant"``): predict f(x_t); shrink every
    coefficient by (1 − η_t λ); on a margin violation y_t f(x_t) < 1 add x_t with
    coefficient η_t y_t (and, with ``offset``, b ← b + η_t y_t, unregularised; else b = 0).
    Then truncate: drop every coefficient of magnitude below ``tol`` (0: none), then the
    oldest terms while there are more than ``budget`` (0: no limit). η_1 λ = eta·λ must
    be below 1. Kernel evaluations are counted per kernel row; no kernel-row cache (every
    row is of a new example and used once).

    Examples
    --------
    >>> import numpy as np
    >>> learner = Norma(2, kernel="linear", lam=0.5, eta=1.0, schedule="constant")
    >>> learner.learn(np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), np.array([1.0, 1.0, -1.0]))
    array([0., 1., 0.])
    >>> learner.coefficients()
    array([ 0.25, -1.  ])
    """

    name = "kernel_sgd"
    params = {
        **KERNEL_PARAMS,
        "lam": Param(0.01, above=0.0, doc="regularisation lambda"),
        "eta": Param(0.5, above=0.0, doc="step size eta (eta / sqrt(t) or constant)"),
        "schedule": Param("sqrt", str, choices=SCHEDULES, doc="step schedule: eta / sqrt(t), or constant eta"),
        "tol": Param(0.0, low=0.0, doc="coefficients of magnitude below tol are dropped (0: none)"),
        "budget": Param(0, int, low=0, doc="most terms kept, the oldest dropped first (0: no limit)"),
        "offset": Param(False, bool, doc="learn an unregularised bias b"),
    }
    bench_params = None  # the expansion grows with the margin violations: quadratic on dolb bench's streams
    test_params = {"gamma": 2.0, "tol": 1e-3, "offset": True}

    def __init__(self, n_features, n_train=None, conversions=("last",), **params):
        super().__init__(n_features, n_train, conversions, **params)
        c = self.config
        if c["eta"] * c["lam"] >= 1.0:
            raise ConfigError(f"learner {self.name!r}: eta * lam must be below 1, got {c['eta'] * c['lam']!r}")
        self.P = (c["lam"], c["eta"], SCHEDULES.index(c["schedule"]), c["tol"], c["budget"], c["offset"])

    def _run(self, indptr, indices, data, y, ids, t, pred):
        return norma_block(self.spec, self.P, indptr, indices, data, y, ids, t, self.store.arrays, self.F, self.I,
                           self._work, self._row, pred)
