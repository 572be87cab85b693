"""Bare loops: each sparse linear learner's update written out in one Numba function over
an in-memory CSR matrix, for ``dolb bench stream`` to compare dolb's learners with.

No blocks, no conversions, no loss bookkeeping, no input checks: one pass over the rows
in the order given, w updated in place. They learn what the registered learners learn
with the same parameters (the test of this module checks the weights): the Perceptron
(w += y·x on y⟨w, x⟩ ≤ 0), PA-I (τ = min(C, ℓ/‖x‖²)), SGD with L2 shrinking (w = s·v,
η_t = η_0/√t, the scale folded into v when it leaves [1e-3, 1e3]), AdaGrad and
FTRL-Proximal, with the hinge or logistic loss.

Examples
--------
>>> import scipy.sparse as sp
>>> X = sp.csr_matrix(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]))
>>> bare_pass("perceptron", {}, X, np.array([1.0, -1.0, 1.0]))
array([0., 0.])
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dolb.learners import learner_class

_HINGE, _LOGISTIC = 0, 1


@numba.njit(cache=True, inline="always")
def _dloss(logistic, y, p):
    """Derivative in p of the hinge (0 at the kink) or logistic loss."""
    z = y * p
    if not logistic:
        return -y if z < 1.0 else 0.0
    if z > 0.0:
        e = math.exp(-z)
        return -y * e / (1.0 + e)
    return -y / (1.0 + math.exp(z))


@numba.njit(cache=True, nogil=True)
def _dot(w, indices, data, a, b):
    dot = 0.0
    for k in range(a, b):
        dot += w[indices[k]] * data[k]
    return dot


@numba.njit(cache=True, nogil=True)
def perceptron(indptr, indices, data, y, w):
    """The Perceptron."""
    for t in range(y.shape[0]):
        a, b = indptr[t], indptr[t + 1]
        if y[t] * _dot(w, indices, data, a, b) <= 0.0:
            for k in range(a, b):
                w[indices[k]] += y[t] * data[k]


@numba.njit(cache=True, nogil=True)
def pa1(indptr, indices, data, y, w, C):
    """PA-I."""
    for t in range(y.shape[0]):
        a, b = indptr[t], indptr[t + 1]
        loss = 1.0 - y[t] * _dot(w, indices, data, a, b)
        sq = 0.0
        for k in range(a, b):
            sq += data[k] * data[k]
        if loss > 0.0 and sq > 0.0:
            c = min(C, loss / sq) * y[t]
            for k in range(a, b):
                w[indices[k]] += c * data[k]


@numba.njit(cache=True, nogil=True)
def sgd(indptr, indices, data, y, w, logistic, alpha, eta0):
    """SGD with L2 shrinking, η_t = η_0/√t, w = s·v (``w`` holds v, folded at the end)."""
    s = 1.0
    for t in range(y.shape[0]):
        a, b = indptr[t], indptr[t + 1]
        eta = eta0 / math.sqrt(t + 1)
        g = _dloss(logistic, y[t], s * _dot(w, indices, data, a, b))
        shrink = 1.0 - eta * alpha
        if shrink > 0.0:
            s *= shrink
        if g != 0.0:
            c = -eta * g / s
            for k in range(a, b):
                w[indices[k]] += c * data[k]
        if not 1e-3 <= abs(s) <= 1e3:
            w *= s
            s = 1.0
    w *= s


@numba.njit(cache=True, nogil=True)
def adagrad(indptr, indices, data, y, w, logistic, eta, eps):
    """Diagonal AdaGrad."""
    G = np.zeros_like(w)
    for t in range(y.shape[0]):
        a, b = indptr[t], indptr[t + 1]
        g = _dloss(logistic, y[t], _dot(w, indices, data, a, b))
        if g == 0.0:
            continue
        for k in range(a, b):
            gk = g * data[k]
            if gk != 0.0:
                j = indices[k]
                G[j] += gk * gk
                w[j] -= eta * gk / (eps + math.sqrt(G[j]))


@numba.njit(cache=True, nogil=True)
def ftrl(indptr, indices, data, y, w, logistic, alpha, beta, l1, l2):
    """FTRL-Proximal."""
    z = np.zeros_like(w)
    n = np.zeros_like(w)
    for t in range(y.shape[0]):
        a, b = indptr[t], indptr[t + 1]
        g = _dloss(logistic, y[t], _dot(w, indices, data, a, b))
        if g == 0.0:
            continue
        for k in range(a, b):
            gk = g * data[k]
            if gk == 0.0:
                continue
            j = indices[k]
            root = math.sqrt(n[j])
            n[j] += gk * gk
            new_root = math.sqrt(n[j])
            z[j] += gk - (new_root - root) / alpha * w[j]
            if abs(z[j]) <= l1:
                w[j] = 0.0
            else:
                w[j] = -(z[j] - math.copysign(l1, z[j])) / ((beta + new_root) / alpha + l2)


LOOPS = {
    "perceptron": lambda p: (perceptron,),
    "pa": lambda p: (pa1, p["C"]),
    "sgd": lambda p: (sgd, p["loss"] == "logistic", p["alpha"], p["eta0"]),
    "adagrad": lambda p: (adagrad, p["loss"] == "logistic", p["eta"], p["eps"]),
    "ftrl": lambda p: (ftrl, p["loss"] == "logistic", p["alpha"], p["beta"], p["l1"], p["l2"]),
}
"""For each learner: from its full parameters (defaults filled in by the learner's own
declaration), its loop and the loop's arguments after w. PA is PA-I, SGD the sqrt
schedule."""


def bare_pass(name: str, params: dict, X, y: np.ndarray) -> np.ndarray:
    """The weights after one bare pass of learner ``name`` over CSR ``X`` (float64 data,
    int32 indices), labels ``y``."""
    loop, *args = LOOPS[name](learner_class(name).check_params(params))
    w = np.zeros(X.shape[1])
    loop(X.indptr, X.indices, np.asarray(X.data, dtype=np.float64), np.asarray(y, dtype=np.float64), w, *args)
    return w
