"""Blocks as learners take them: a C-contiguous float64 array, or a float64 CSR matrix
whose structure is sound and canonical.

:func:`as_block` checks a CSR matrix's structure in one compiled pass and names the first
bad row (SciPy does not check a matrix made from arrays); rows whose column indices do
not strictly increase are made canonical (sorted, duplicates summed). A learner that
reads every column index asks for the row pointers only (``columns=False``); a block from
a store (flagged :data:`~dolb.data.store.readers.CHECKED`) or rows left in place
(:class:`~dolb.data.store.spans.RowSpans`) are not scanned again. Values are checked by
the learners as they read them. What is checked where, and why: docs/design/data-store.md.

Examples
--------
>>> import scipy.sparse as sp
>>> as_block([1.0, 2.0], 1).shape
(2, 1)
>>> X = sp.csr_matrix((np.array([1.0, 2.0]), np.array([1, 0]), np.array([0, 2])), shape=(1, 2))
>>> as_block(X, 2).indices.tolist()  # made canonical
[0, 1]
>>> X = sp.csr_matrix((np.array([1.0]), np.array([5]), np.array([0, 0, 1])), shape=(2, 3))
>>> as_block(X, 3)
Traceback (most recent call last):
...
dolb.errors.DataError: block: row 1 has column index 5, outside 0..2
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

from dolb.data.store.readers import CHECKED
from dolb.data.store.spans import RowSpans
from dolb.errors import DataError


@numba.njit(cache=True)
def _columns(indptr, indices):
    """(smallest index, largest index, number of places where a row's column indices do
    not increase) of a CSR structure with stored values: one flat loop in the indices'
    own type, so that it vectorises, then the comparisons across row boundaries taken
    out."""
    rows = indptr.shape[0] - 1
    low = high = indices[0]
    disorder = 0
    for k in range(1, indices.shape[0]):
        index = indices[k]
        low = min(low, index)
        high = max(high, index)
        disorder += index <= indices[k - 1]
    for i in range(1, rows):
        k = indptr[i]
        if indptr[i - 1] < k < indptr[rows]:
            disorder -= indices[k] <= indices[k - 1]
    return low, high, disorder


@numba.njit(cache=True)
def _pointer_fault(indptr, stored):
    """The first row whose pointers decrease or run past the ``stored`` values (the first
    pointer must be 0: row 0 then), or −1. Pointers that never decrease, the last within
    ``stored``, are sound: that is asked first, in a flat loop without an exit, so that
    it vectorises (docs/design/data-store.md)."""
    rows = indptr.shape[0] - 1
    if indptr[0] != 0:
        return 0
    decreases = False
    for i in range(rows):
        decreases |= indptr[i + 1] < indptr[i]
    if not decreases and indptr[rows] <= stored:
        return -1
    for i in range(rows):
        if indptr[i + 1] < indptr[i] or indptr[i + 1] > stored:
            return i
    return -1


@numba.njit(cache=True)
def _column_fault(indptr, indices, width):
    """(position of the first column index outside 0..width−1 or −1, ``disorder`` as
    :func:`_columns` counts it) of a CSR structure with sound row pointers."""
    if indptr[-1] == 0:
        return -1, 0
    low, high, disorder = _columns(indptr, indices[: indptr[-1]])
    if low < 0 or high >= width:
        for k in range(indptr[-1]):
            if indices[k] < 0 or indices[k] >= width:
                return k, 0
    return -1, disorder


def canonical(X) -> sp.csr_matrix:
    """A float64 CSR copy of ``X`` with sorted column indices and duplicates summed."""
    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    X.sum_duplicates()
    return X


def as_block(X, n_features: int, source: str = "block", first_row: int = 0, columns: bool = True,
             spans: bool = False):
    """``X`` as a C-contiguous float64 array, or as a float64 CSR matrix with a sound,
    canonical structure (see the module docstring), with ``n_features`` columns; rows
    left in place by a store's reader (:class:`~dolb.data.store.spans.RowSpans`) as
    they are when ``spans``, else gathered into CSR.

    Parameters
    ----------
    X : array_like or sparse matrix
        The block.
    n_features : int
        Columns it must have.
    source, first_row : str, int
        What a :class:`~dolb.errors.DataError` names (``"learner 'pa'"``), and the number
        of the block's first row in it.
    columns : bool
        Check the column indices and make the rows canonical. False: the caller reads
        every row's column indices and checks them as it goes (the linear learners'
        driver); the row pointers are checked either way.
    spans : bool
        The caller reads :class:`~dolb.data.store.spans.RowSpans` (rows a store's reader
        made: sound, canonical and finite).

    Raises
    ------
    ValueError
        Another number of columns.
    DataError
        Row pointers that decrease or run past the values (or the column indices), or a
        column index outside 0..n_features − 1, naming the row.
    """
    if isinstance(X, RowSpans) and not spans:
        X = X.tocsr()
    if sp.issparse(X):
        if type(X) is not sp.csr_matrix or X.dtype != np.float64:  # else kept, attributes and all
            X = sp.csr_matrix(X, dtype=np.float64)
    elif not isinstance(X, RowSpans):
        X = np.ascontiguousarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X.reshape(-1, 1)
    if X.shape[1] != n_features:
        raise ValueError(f"block has {X.shape[1]} features, learner expects {n_features}")
    if not sp.issparse(X) or getattr(X, CHECKED, False):  # dense, rows in place, or read from a store
        return X
    row = _pointer_fault(X.indptr, min(X.indices.shape[0], X.data.shape[0]))
    if row >= 0:
        raise DataError(f"{source}: row {first_row + row}: its row pointers decrease or run past the values")
    if not columns:
        return X
    position, disorder = _column_fault(X.indptr, X.indices, n_features)
    if position >= 0:
        row = int(np.searchsorted(X.indptr, position, side="right")) - 1
        raise column_error(source, first_row + row, int(X.indices[position]), n_features)
    return canonical(X) if disorder else X


def rows_from(X: sp.csr_matrix | RowSpans, row: int) -> sp.csr_matrix:
    """The rows of CSR ``X`` from ``row`` on, its arrays sliced as they are (SciPy's own
    slicing drops the column indices outside the matrix: a fault :func:`as_block` must
    see); of rows in place, gathered."""
    if isinstance(X, RowSpans):
        return X[row:].tocsr()
    start, stop = X.indptr[row], X.indptr[-1]
    return sp.csr_matrix(
        (X.data[start:stop], X.indices[start:stop], X.indptr[row:] - start), shape=(X.shape[0] - row, X.shape[1])
    )


def row_range(X, start: int, stop: int):
    """Rows ``start`` to ``stop - 1`` of a block, copying nothing: a view of a dense
    block, rows in place still in place, and of a CSR block a matrix over slices of
    its arrays, flagged :data:`~dolb.data.store.readers.CHECKED` as the block was (its
    rows are sound: :func:`as_block` does not scan them again), where SciPy's own
    slicing copies and checks them.

    >>> X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 4.0]]))
    >>> row_range(X, 1, 3).toarray().tolist()
    [[0.0, 2.0], [3.0, 4.0]]
    """
    if not sp.issparse(X):
        return X[start:stop]
    low, high = X.indptr[start], X.indptr[stop]
    rows = sp.csr_matrix((stop - start, X.shape[1]))
    # set, not passed: SciPy would copy the slices of a larger array (and check them)
    rows.data, rows.indices, rows.indptr = X.data[low:high], X.indices[low:high], X.indptr[start : stop + 1] - low
    if getattr(X, CHECKED, False):
        setattr(rows, CHECKED, True)
    return rows


def column_error(source: str, row: int, index: int, n_features: int) -> DataError:
    """The error for a row holding column ``index``, outside the matrix."""
    return DataError(f"{source}: row {row} has column index {index}, outside 0..{n_features - 1}")


def label_error(source: str, row: int, label: float) -> DataError:
    """The error for a row of a binary task whose label is not −1 or +1."""
    return DataError(f"{source}: labels must be -1 or +1, row {row} has {float(label)!r}")
