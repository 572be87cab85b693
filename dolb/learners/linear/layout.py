"""The input of the linear learners: a block as CSR arrays.

Blocks arrive as dense arrays or CSR matrices; a dense block is run in place as a CSR
matrix that stores every entry (the column indices are built once and shared), or, when
at least half of it is zeros, copied into CSR without them; a CSR block is canonical
already (:func:`~dolb.data.blocks.as_block` made it so). A step must treat a stored zero
x_j as absent (its update of v_j, and of any per-coordinate state, is exactly nothing):
dense and sparse input then give bit-identical learners.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

from dolb.data.store.format import INT32_MAX
from dolb.data.store.readers import CHECKED
from dolb.data.store.spans import RowSpans


def pointer_dtype(values: int) -> np.dtype:
    """The type of the row pointers of a block of ``values`` stored values: int32, as
    SciPy and a store's reader give them (the driver reads them as they are, and has one
    compiled copy), unless they do not fit."""
    return np.dtype(np.int32 if values <= INT32_MAX else np.int64)


@numba.njit(cache=True)
def row_norms_squared(indptr, data):
    """‖x_t‖² of every row of a CSR block."""
    n = indptr.shape[0] - 1
    out = np.zeros(n)
    for i in range(n):
        acc = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            acc += data[k] * data[k]
        out[i] = acc
    return out


class DenseLayout:
    """indptr and column indices of dense blocks seen as CSR with every entry stored
    (zeros included), grown to the largest block and shared by later, smaller ones."""

    def __init__(self) -> None:
        self.rows, self.width = 0, 0
        self.indptr = np.zeros(1, np.int32)
        self.indices = np.zeros(0, np.int32)

    def parts(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n, d = X.shape
        if n > self.rows or d != self.width:
            self.rows, self.width = max(n, self.rows if d == self.width else 0), d
            self.indptr = np.arange(self.rows + 1, dtype=pointer_dtype(self.rows * d)) * d
            self.indices = np.tile(np.arange(d, dtype=np.int32), self.rows)
        return self.indptr[: n + 1], self.indices[: n * d], X.reshape(-1)


@numba.njit(cache=True)
def _compact(X):
    """CSR parts of a dense block without its zeros."""
    n, d = X.shape
    indptr = np.zeros(n + 1, np.int64)
    for i in range(n):
        c = 0
        for j in range(d):
            c += X[i, j] != 0.0
        indptr[i + 1] = indptr[i] + c
    indices = np.empty(indptr[n], np.int32)
    data = np.empty(indptr[n])
    k = 0
    for i in range(n):
        for j in range(d):
            if X[i, j] != 0.0:
                indices[k] = j
                data[k] = X[i, j]
                k += 1
    return indptr, indices, data


_EXPONENT = np.int64(0x7FF0000000000000)


@numba.njit(cache=True)
def _count_non_finite(bits):
    """The number of non-finite values (``bits``: the values as int64). A flat loop
    without branches, so that it vectorises."""
    nonfinite = 0
    for k in range(bits.shape[0]):
        nonfinite += (bits[k] & _EXPONENT) == _EXPONENT
    return nonfinite


def _first_non_finite(data) -> int:
    """The first position of a non-finite value in ``data``, or −1."""
    return int(np.flatnonzero(~np.isfinite(data))[0]) if _count_non_finite(data.view(np.int64)) else -1


def csr_arrays(X, layout: DenseLayout | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(indptr, indices int32, data float64) of a block, values not scanned; the row
    pointers of :func:`pointer_dtype` (a CSR block's own, not copied). A dense block is viewed in place, zeros
    included (its column indices from ``layout``, which keeps them for the next block),
    unless at least half of it is zeros (MNIST-like): then it is copied without them."""
    if not sp.issparse(X):
        X = np.ascontiguousarray(X, dtype=np.float64)
        if 2 * np.count_nonzero(X) <= X.size:
            indptr, indices, data = _compact(X)
            return indptr.astype(pointer_dtype(data.shape[0])), indices, data
        return (layout or DenseLayout()).parts(X)
    return (
        np.asarray(X.indptr, dtype=pointer_dtype(X.indptr[-1])),
        np.asarray(X.indices, dtype=np.int32),
        np.ascontiguousarray(X.data, dtype=np.float64),
    )


def row_arrays(X, layout: DenseLayout | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(begins, ends, indices, data) of a block's rows, as the driver reads them (row t:
    ``indices`` and ``data`` from ``begins[t]`` to ``ends[t]``): the arrays of rows left
    in place (:class:`~dolb.data.store.spans.RowSpans`), else :func:`csr_arrays` with
    the row pointers seen as begins and ends."""
    if isinstance(X, RowSpans):
        return X.begins, X.ends, X.indices, X.data
    indptr, indices, data = csr_arrays(X, layout)
    return indptr[:-1], indptr[1:], indices, data


def csr_parts(X, layout: DenseLayout | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(indptr, indices, data, first non-finite position or −1) of a block as
    :func:`csr_arrays` gives them, its values scanned. A CSR block read from a store
    (flagged :data:`~dolb.data.store.readers.CHECKED`) is known finite and is not scanned
    again. (The linear learners check values in their driver instead, as they read them.)
    Arrays come back writable: a store's block may hold read-only views of its cached
    chunks, which would make the compiled code of the learners using this function
    compile a second time, for read-only arrays."""
    indptr, indices, data = (a if a.flags.writeable else a.copy() for a in csr_arrays(X, layout))  # see below
    return indptr, indices, data, -1 if getattr(X, CHECKED, False) else _first_non_finite(data)
