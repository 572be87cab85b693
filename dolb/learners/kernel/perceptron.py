"""The kernel Perceptron, with an optional budget."""

from __future__ import annotations

import numba

from dolb.learners.base import Param, register
from dolb.learners.kernel.kernels import (
    ALPHA,
    KERNEL_PARAMS,
    add_row,
    has_room,
    remove_oldest,
    scored_row,
)
from dolb.learners.kernel.learner import KernelLearner


@numba.njit(cache=True)
def perceptron_block(spec, budget, indptr, indices, data, y, ids, start, store, I, work, row, pred):
    """Run rows start.. of a block; returns where it stopped (the end, or a row that needs
    room in the store)."""
    for t in range(start, y.shape[0]):
        idx, val = indices[indptr[t]:indptr[t + 1]], data[indptr[t]:indptr[t + 1]]
        if not has_room(store, idx.shape[0]):
            return t
        n, sq_x, f = scored_row(spec, store, idx, val, work, row, I)
        pred[t] = f
        if y[t] * f <= 0.0:
            s = add_row(spec, store, idx, val, sq_x, ids[t])
            store[5][s, ALPHA] = y[t]
            if 0 < budget < store[7][0]:
                remove_oldest(store)
    return y.shape[0]


@register
class KernelPerceptron(KernelLearner):
    """The kernel Perceptron (Freund & Schapire, "Large margin classification using the
    perceptron algorithm", Machine Learning 1999), with an optional budget.

    f(x) = Σ_s α_s K(x_s, x) (no bias), empty at first. A mistake is y·f(x) ≤ 0 (a zero
    score is a mistake), and then x joins the support vectors with α = y. With
    ``budget`` > 0, when the support vectors exceed it the oldest one is removed (first
    in, first out). With the linear kernel it is the Perceptron.
    Kernel evaluations are counted per kernel row (one per support vector per example).
    No kernel-row cache: every row is of a new example and used once.

    Examples
    --------
    >>> import numpy as np
    >>> learner = KernelPerceptron(2, kernel="linear")
    >>> learner.learn(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]), np.array([1.0, -1.0, 1.0]))
    array([ 0.,  1., -1.])
    >>> learner.coefficients(), learner.diagnostics()
    (array([ 1., -1.,  1.]), {'n_sv': 3.0, 'kernel_evals': 3.0})
    """

    name = "kernel_perceptron"
    params = {
        **KERNEL_PARAMS,
        "budget": Param(0, int, low=0, doc="most support vectors kept, the oldest removed first (0: no limit)"),
    }
    bench_params = None  # the expansion grows with the mistakes: quadratic on dolb bench's noisy streams
    test_params = {"gamma": 2.0}

    def _run(self, indptr, indices, data, y, ids, t, pred):
        return perceptron_block(self.spec, self.config["budget"], indptr, indices, data, y, ids, t,
                                self.store.arrays, self.I, self._work, self._row, pred)
