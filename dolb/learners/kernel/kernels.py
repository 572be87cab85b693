"""Kernel functions and the compact storage of support vectors, compiled.

The kernels: linear x·z, polynomial (x·z + c)^d and RBF exp(−γ‖x − z‖²), the squared
distance computed as ‖x‖² + ‖z‖² − 2x·z from stored squared norms (clipped at 0).

A row x arrives as its stored entries (column indices ascending, values); every dot
product sums the products of the entries both rows store, in ascending column order,
so a dense and a CSR copy of the same data give bit-identical kernel values (a product
with a zero adds exactly nothing), and K(x, z) = K(z, x) bit for bit.

The support vectors live in a :class:`SupportRows` store, one *slot* per vector:

* dense storage (when the first block is dense): ``svt``, a d × capacity array, column
  s holding vector s, so that a kernel row (x against every vector) is a few
  contiguous, vectorised axpy's over the slots, one per non-zero of x;
* CSR storage: a pool of column indices and values, slot s at ``start[s]`` for
  ``length[s]`` entries (a removed vector's entries are dead until :meth:`compact`).

Each slot also carries numbers (``slot_f``: squared norm, coefficient α, gradient,
K(x, x), label, averaged coefficient) and an ``id`` (the stream position of the example). A vector is removed
by moving the last slot into its place, so the live slots are always 0..n−1.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numba
import numpy as np
import scipy.sparse as sp

from dolb.learners.base import Param
from dolb.learners.linear import choice_codes

KERNELS = ("rbf", "poly", "linear")
RBF, POLY, LINEAR = choice_codes(KERNELS, "rbf", "poly", "linear")
KernelSpec = namedtuple("KernelSpec", ["code", "gamma", "degree", "coef0"])
"""What the compiled code reads of a kernel: its code, γ, the degree and c."""

KERNEL_PARAMS = {
    "kernel": Param("rbf", str, choices=KERNELS, doc="rbf exp(-gamma |x - z|^2), poly (x.z + coef0)^degree, linear"),
    "gamma": Param(1.0, above=0.0, doc="RBF width gamma (the complexity level; unused by poly and linear)"),
    "degree": Param(3, int, low=1, doc="degree of the polynomial kernel"),
    "coef0": Param(1.0, low=0.0, doc="constant c of the polynomial kernel"),
}
"""The kernel parameters every kernel learner declares."""

SQNORM, ALPHA, GRAD, KDIAG, LABEL, MEAN = range(6)
"""Columns of ``slot_f``: ‖x_s‖², α_s, the gradient g_s, K(x_s, x_s), y_s, and the
coefficient of the averaged hypothesis (kept by the learners that offer one)."""


def kernel_spec(config: dict) -> KernelSpec:
    """The compiled code's view of a learner's checked kernel parameters."""
    return KernelSpec(KERNELS.index(config["kernel"]), config["gamma"], config["degree"], config["coef0"])


@numba.njit(cache=True)
def from_dot(spec, dot, sq_x, sq_z):
    """K(x, z) from x·z and the squared norms."""
    if spec.code == RBF:
        return math.exp(-spec.gamma * max(sq_x + sq_z - 2.0 * dot, 0.0))
    if spec.code == POLY:
        return (dot + spec.coef0) ** spec.degree
    return dot


@numba.njit(cache=True)
def squared_norm(val):
    acc = 0.0
    for v in val:
        acc += v * v
    return acc


class SupportRows:
    """The support vectors' rows and per-slot numbers, in arrays the compiled code
    takes as the tuple :attr:`arrays` (grown from Python between runs)."""

    def __init__(self, n_features: int, dense: bool, capacity: int = 16) -> None:
        self.dense = dense
        self.svt = np.zeros((n_features if dense else 0, capacity))
        self.pool_idx = np.zeros(0 if dense else 16 * capacity, np.int32)
        self.pool_val = np.zeros(self.pool_idx.shape[0])
        self.start = np.zeros(capacity, np.int64)
        self.length = np.zeros(capacity, np.int64)
        self.slot_f = np.zeros((capacity, MEAN + 1))
        self.ids = np.zeros(capacity, np.int64)
        self.meta = np.zeros(2, np.int64)  # live slots, pool entries used (live and dead)

    @property
    def arrays(self) -> tuple:
        return (self.svt, self.pool_idx, self.pool_val, self.start, self.length, self.slot_f, self.ids, self.meta)

    @property
    def n(self) -> int:
        return int(self.meta[0])

    @property
    def capacity(self) -> int:
        return self.slot_f.shape[0]

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays)

    def make_room(self, nnz: int) -> None:
        """Room for one more vector of ``nnz`` entries (capacity grown by a quarter)."""
        n = self.n
        if n == self.capacity:
            grown = max(16, math.ceil(1.25 * (n + 1)))
            self.slot_f = _grown(self.slot_f, grown)
            self.ids, self.start, self.length = (_grown(a, grown) for a in (self.ids, self.start, self.length))
            if self.dense:
                svt = np.zeros((self.svt.shape[0], grown))
                svt[:, :n] = self.svt[:, :n]
                self.svt = svt
        if not self.dense and self.meta[1] + nnz > self.pool_idx.shape[0]:
            self.compact()
            need = max(int(self.meta[1]) + nnz, 16)
            if need > self.pool_idx.shape[0]:
                self.pool_idx = _grown(self.pool_idx, math.ceil(1.25 * need))
                self.pool_val = _grown(self.pool_val, self.pool_idx.shape[0])

    def compact(self) -> None:
        """Drop the dead entries of the CSR pool (slot order unchanged)."""
        n, live = self.n, self._live_entries()
        self.pool_idx[: live.shape[0]], self.pool_val[: live.shape[0]] = self.pool_idx[live], self.pool_val[live]
        self.start[:n] = np.cumsum(self.length[:n]) - self.length[:n]
        self.meta[1] = live.shape[0]

    def rows(self, n_features: int) -> sp.csr_matrix:
        """The vectors as a CSR matrix (n × d, stored entries kept)."""
        n = self.n
        if self.dense:
            return sp.csr_matrix(self.svt[:, :n].T)
        live = self._live_entries()
        indptr = np.concatenate([[0], np.cumsum(self.length[:n])])
        return sp.csr_matrix((self.pool_val[live], self.pool_idx[live], indptr), shape=(n, n_features))

    def _live_entries(self) -> np.ndarray:
        """Positions in the CSR pool of the live vectors' entries, in slot order."""
        n = self.n
        return np.concatenate([np.arange(0, dtype=np.int64)]
                              + [np.arange(s, s + k, dtype=np.int64) for s, k in zip(self.start[:n], self.length[:n])])


def _grown(a: np.ndarray, rows: int) -> np.ndarray:
    """``a`` with its first axis extended to ``rows`` (zeros)."""
    out = np.zeros((rows, *a.shape[1:]), a.dtype)
    out[: a.shape[0]] = a
    return out


@numba.njit(cache=True)
def has_room(store, nnz):
    """Whether one more vector of ``nnz`` entries fits without growing the store."""
    svt, pool_idx, _, _, _, slot_f, _, meta = store
    if meta[0] == slot_f.shape[0]:
        return False
    return svt.shape[0] > 0 or meta[1] + nnz <= pool_idx.shape[0]


@numba.njit(cache=True)
def dots(store, idx, val, work, out):
    """out[s] = x·x_s for every live slot s (``work``: d zeros, left zero)."""
    svt, pool_idx, pool_val, start, length, _, _, meta = store
    n = meta[0]
    out[:n] = 0.0
    if svt.shape[0] > 0:
        for k in range(idx.shape[0]):
            v = val[k]
            column = svt[idx[k]]
            for s in range(n):
                out[s] += v * column[s]
        return
    for k in range(idx.shape[0]):
        work[idx[k]] = val[k]
    for s in range(n):
        acc = 0.0
        for p in range(start[s], start[s] + length[s]):
            acc += pool_val[p] * work[pool_idx[p]]
        out[s] = acc
    for k in range(idx.shape[0]):
        work[idx[k]] = 0.0


@numba.njit(cache=True)
def kernel_row(spec, store, idx, val, sq_x, work, out):
    """out[s] = K(x, x_s) for every live slot s; returns the number of slots."""
    dots(store, idx, val, work, out)
    slot_f = store[5]
    n = store[7][0]
    if spec.code != LINEAR:
        for s in range(n):
            out[s] = from_dot(spec, out[s], sq_x, slot_f[s, SQNORM])
    return n


@numba.njit(cache=True)
def add_row(spec, store, idx, val, sq_x, row_id):
    """Store x in a new slot (room checked); returns the slot."""
    svt, pool_idx, pool_val, start, length, slot_f, ids, meta = store
    s = meta[0]
    if svt.shape[0] > 0:
        svt[:, s] = 0.0
        for k in range(idx.shape[0]):
            svt[idx[k], s] = val[k]
    else:
        p = meta[1]
        start[s], length[s] = p, idx.shape[0]
        pool_idx[p:p + idx.shape[0]] = idx
        pool_val[p:p + idx.shape[0]] = val
        meta[1] = p + idx.shape[0]
    slot_f[s, :] = 0.0
    slot_f[s, SQNORM] = sq_x
    slot_f[s, KDIAG] = from_dot(spec, sq_x, sq_x, sq_x)
    ids[s] = row_id
    meta[0] = s + 1
    return s


@numba.njit(cache=True)
def remove_slot(store, s):
    """Remove vector s: the last slot moves into its place."""
    svt, _, _, start, length, slot_f, ids, meta = store
    last = meta[0] - 1
    if s != last:
        if svt.shape[0] > 0:
            svt[:, s] = svt[:, last]
        start[s], length[s] = start[last], length[last]
        slot_f[s, :] = slot_f[last, :]
        ids[s] = ids[last]
    meta[0] = last


@numba.njit(cache=True)
def slot_entries(store, s, idx_buf, val_buf):
    """The stored entries of vector s copied into the buffers; returns their number."""
    svt, pool_idx, pool_val, start, length, _, _, _ = store
    if svt.shape[0] > 0:
        nnz = 0
        for j in range(svt.shape[0]):
            if svt[j, s] != 0.0:
                idx_buf[nnz], val_buf[nnz] = j, svt[j, s]
                nnz += 1
        return nnz
    nnz = length[s]
    idx_buf[:nnz] = pool_idx[start[s]:start[s] + nnz]
    val_buf[:nnz] = pool_val[start[s]:start[s] + nnz]
    return nnz


@numba.njit(cache=True)
def weighted_sum(store, row, n):
    """Σ_s α_s row[s] over the first n slots."""
    alpha = store[5][:, ALPHA]
    acc = 0.0
    for s in range(n):
        acc += alpha[s] * row[s]
    return acc


EVALS, ROUNDS = 0, 1
"""The first two counters of every kernel learner's ``I``: kernel values computed, and
examples seen."""
BIAS = 0
"""The first slot of every kernel learner's float state ``F``: the bias b of
f(x) = Σ α_s K(x_s, x) + b (0 for the learners without one); the second slot is the
subclass's (LASVM's gap δ, the manifold learners' summed risk)."""


@numba.njit(inline="always")  # compiled into each learner's cached block loop
def scored_row(spec, store, idx, val, work, row, I):
    """The kernel row of x = (idx, val) against the support vectors into ``row[:n]``,
    counted in ``I`` (EVALS += n, ROUNDS += 1); returns (n, ‖x‖², Σ_s α_s K(x_s, x))."""
    sq_x = squared_norm(val)
    n = kernel_row(spec, store, idx, val, sq_x, work, row)
    I[EVALS] += n
    I[ROUNDS] += 1
    return n, sq_x, weighted_sum(store, row, n)


@numba.njit(cache=True)
def decision_values(spec, store, indptr, indices, data, bias, work, row, out):
    """f(x) = Σ_s α_s K(x_s, x) + b for every row of a CSR block."""
    for t in range(indptr.shape[0] - 1):
        idx, val = indices[indptr[t]:indptr[t + 1]], data[indptr[t]:indptr[t + 1]]
        n = kernel_row(spec, store, idx, val, squared_norm(val), work, row)
        out[t] = weighted_sum(store, row, n) + bias


@numba.njit(cache=True)
def oldest_slot(store, unlabelled_first=False):
    """The slot of the smallest id (the oldest example); with ``unlabelled_first``, the
    oldest of the slots whose label is 0 (unlabelled) when there is one."""
    slot_f, ids, meta = store[5], store[6], store[7]
    oldest = oldest_unlabelled = -1
    for s in range(meta[0]):
        if oldest < 0 or ids[s] < ids[oldest]:
            oldest = s
        if slot_f[s, LABEL] == 0.0 and (oldest_unlabelled < 0 or ids[s] < ids[oldest_unlabelled]):
            oldest_unlabelled = s
    return oldest_unlabelled if unlabelled_first and oldest_unlabelled >= 0 else oldest


@numba.njit(cache=True)
def remove_oldest(store):
    """Remove the vector of the smallest id (the oldest example)."""
    remove_slot(store, oldest_slot(store))
