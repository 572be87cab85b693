"""The batch reference: the least-squares polynomial fit on every example seen so far."""

from __future__ import annotations

import numba
import numpy as np
from numba import types

from dolb.learners.base import register
from dolb.learners.basis import POLYNOMIAL_PARAMS, PolynomialLearner

_EPS = float(np.finfo(np.float64).eps)

_GELSD = types.ExternalFunction("numba_ez_gelsd", types.intc(
    types.char, types.intp, types.intp, types.intp, types.voidptr, types.intp, types.voidptr, types.intp,
    types.voidptr, types.float64, types.voidptr))
"""LAPACK's ``dgelsd`` as Numba's own ``np.linalg.lstsq`` calls it (Numba's helper of
that name: a workspace query, then the solve; kind, m, n, nrhs, a, lda, b, ldb, s, rcond,
rank), by its symbol name, so a kernel calling it is cached like any other."""


@register
class BatchLS(PolynomialLearner):
    """Least-squares polynomial fit on all examples so far, the batch reference of
    Buschermöhle et al., "The Incremental Risk Functional" (IEEE SMC 2013).

    θ_t = argmin_θ Σ_{i≤t} (y_i − φ_iᵀθ)², the minimum-norm one when the examples do
    not determine θ (as ``numpy.linalg.lstsq`` gives); example t is predicted with
    θ_{t−1} (θ_0 = 0). Exact without the normal equations (which would square the
    condition number) and without keeping the examples: the state is a QR factorisation
    of the design matrix, R (n×n upper triangular, n = order + 1) and z = Qᵀy, with
    Σ(y_i − φ_iᵀθ)² = ‖Rθ − z‖² + const. Each example is rotated into (R, z) by n Givens
    rotations (Golub & Van Loan, "Matrix Computations", QR updating); θ then solves Rθ = z by
    back substitution, O(n²) per example. When R's diagonal shows a rank deficiency,
    min |R_ii| ≤ rcond·max |R_ii| with lstsq's default rcond = eps·max(t, n) (always so
    before n examples: the rows of R no example has reached stay exactly zero), θ is
    the minimum-norm solution ``lstsq(R, z, rcond)`` instead, which equals ``lstsq`` on
    the examples themselves (same solution set, same singular values).

    Parameters
    ----------
    order, basis, domain_low, domain_high
        See :data:`dolb.learners.basis.POLYNOMIAL_PARAMS`.

    Examples
    --------
    >>> learner = BatchLS(1, order=1)
    >>> learner.learn(np.array([[1.0], [0.0], [2.0]]), np.array([2.0, 1.0, 3.0]))
    array([0., 1., 3.])
    >>> learner.theta
    array([1., 1.])
    """

    name = "batch_ls"
    params = dict(POLYNOMIAL_PARAMS)

    def __init__(self, n_features, n_train=None, **params):
        super().__init__(n_features, n_train, **params)
        self.R = np.zeros((self.basis.size, self.basis.size))
        self.z = np.zeros(self.basis.size)
        self.n_fitted = 0  # examples in the fit (unlabelled rows are not)

    def _learn(self, X, y):
        predictions = _batch_ls_block(self.features(X), y, self.theta, self.R, self.z, self.n_fitted)
        self.n_fitted += y.shape[0]
        return predictions


@numba.njit(cache=True)
def _batch_ls_block(Phi, y, theta, R, z, n_fitted):
    """Add the block's examples to the QR factors (R, z) one at a time, re-solving for
    ``theta`` after each; update all three in place; return the predictions."""
    n = theta.shape[0]
    predictions = np.empty(y.shape[0])
    row = np.empty(n)
    for t in range(y.shape[0]):
        predictions[t] = Phi[t] @ theta
        # Rotate the new row (φ_t, y_t) into (R, z), zeroing it left to right.
        for k in range(n):  # row[:] = Phi[t], a loop: Numba's slice assignment compiles slowly
            row[k] = Phi[t, k]
        target = y[t]
        for j in range(n):
            if row[j] == 0.0:
                continue
            h = np.hypot(R[j, j], row[j])
            c, s = R[j, j] / h, row[j] / h
            R[j, j] = h
            for k in range(j + 1, n):
                r_jk = R[j, k]
                R[j, k] = c * r_jk + s * row[k]
                row[k] = c * row[k] - s * r_jk
            z_j = z[j]
            z[j] = c * z_j + s * target
            target = c * target - s * z_j
        # Solve for the least-squares θ on the first n_fitted + t + 1 examples.
        m = n_fitted + t + 1
        rcond = _EPS * max(m, n)
        if _full_rank(R, rcond):
            for i in range(n - 1, -1, -1):
                acc = z[i]
                for k in range(i + 1, n):
                    acc -= R[i, k] * theta[k]
                theta[i] = acc / R[i, i]
        else:
            solution = _min_norm(R, z, rcond)
            for k in range(n):
                theta[k] = solution[k]
    return predictions


@numba.njit(cache=True)
def _min_norm(R, z, rcond):
    """The minimum-norm least-squares solution of Rθ = z, singular values of R below
    ``rcond`` times the largest taken as zero: ``np.linalg.lstsq(R, z, rcond)[0]`` for a
    square R, bit for bit (the same LAPACK call, ``dgelsd``, on the same copies), without
    the generality of Numba's ``lstsq`` (shapes, complex numbers, residuals). With it
    and Numba's array expressions (slices, reductions), compiling this learner's kernel
    took ~6.5 CPU s on a first run; with these loops, ~1.2 s.

    >>> _min_norm(np.array([[2.0, 0.0], [0.0, 0.0]]), np.array([4.0, 0.0]), 1e-15)
    array([2., 0.])
    """
    n = R.shape[0]
    a = np.empty(n * n)  # R in column-major order, and z: both overwritten by the solve
    b = np.empty(n)
    finite = True
    for j in range(n):  # loops: np.isfinite and np.asfortranarray compile slowly
        for i in range(n):
            a[j * n + i] = R[i, j]
            finite &= np.isfinite(R[i, j])
        b[j] = z[j]
        finite &= np.isfinite(z[j])
    if not finite:
        raise np.linalg.LinAlgError("Array must not contain infs or NaNs.")
    singular_values = np.empty(n)
    rank = np.empty(1, dtype=np.int32)
    info = _GELSD(ord("d"), n, n, 1, a.ctypes, n, b.ctypes, n, singular_values.ctypes, rcond, rank.ctypes)
    if info != 0:  # as Numba's lstsq says it
        raise ValueError("Internal algorithm failed to converge.")
    return b


@numba.njit(cache=True)
def _full_rank(R, rcond):
    """Whether the smallest |R_ii| exceeds ``rcond`` times the largest: ``d.min() > rcond *
    d.max()`` for ``d = np.abs(np.diag(R))``, exactly (a minimum and a maximum round
    nothing; a NaN fails the comparison, as it makes both NaN), in a loop that compiles
    in a fraction of the time of the array reductions.

    >>> _full_rank(np.diag([2.0, 1e-20]), 1e-15), _full_rank(np.diag([2.0, 1.0]), 1e-15)
    (False, True)
    """
    smallest, largest = np.inf, 0.0
    for i in range(R.shape[0]):
        d = abs(R[i, i])
        if d != d:
            return False
        smallest = min(smallest, d)
        largest = max(largest, d)
    return smallest > rcond * largest
