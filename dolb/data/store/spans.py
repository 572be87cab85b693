"""A sparse block whose rows stay where they were decoded.

A block of rows in a given order (a seeded permutation) is, as CSR, a copy: every row
gathered out of the decoded chunk into new arrays, which the learner then reads again.
Copying a permuted a9a pass costs more than learning it. :class:`RowSpans` leaves the
rows in the chunk and says where each one is: row ``i`` has the column indices
``indices[begins[i]:ends[i]]`` and the values ``data[begins[i]:ends[i]]``, where
``indices`` and ``data`` are the decoded chunks themselves (read-only, shared with the
chunk cache). It is CSR with a start and an end per row instead of one pointer array
(the "four-array" variant). A learner that reads rows this way (the linear learners'
driver, which asks the CPU for the rows a few ahead) takes the block as it is; any
other gets :meth:`RowSpans.tocsr`, the gathered copy.

Examples
--------
>>> data, indices = np.array([1.0, 2.0, 3.0]), np.array([0, 1, 0], np.int32)
>>> block = RowSpans(np.array([2, 0]), np.array([3, 2]), indices, data, n_features=2)
>>> block.shape, block.nnz
((2, 2), 3)
>>> block.tocsr().toarray()
array([[3., 0.],
       [1., 2.]])
>>> block[1:].tocsr().toarray()
array([[1., 2.]])
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp

from dolb.data.store.format import INT32_MAX
from dolb.data.store.gather import gather_span_pairs


@dataclasses.dataclass(frozen=True, eq=False)
class RowSpans:
    """Rows of a sparse block left in place (see the module docstring).

    Parameters
    ----------
    begins, ends : ndarray of int32 (int64 in a dataset of 2**31 values or more)
        Where each row starts and stops in ``indices`` and ``data``.
    indices, data : ndarray
        The column indices and values the rows lie in (int32, float64).
    n_features : int
        Columns of the block.
    nnz : int, optional
        Values in the rows, ``sum(ends - begins)`` (computed when not given).
    """

    begins: np.ndarray
    ends: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    n_features: int
    nnz: int = -1

    def __post_init__(self) -> None:
        if self.nnz < 0:
            object.__setattr__(self, "nnz", int(np.sum(self.ends - self.begins)))

    @property
    def shape(self) -> tuple[int, int]:
        return self.begins.shape[0], self.n_features

    def __getitem__(self, rows: slice) -> RowSpans:
        """The rows of a slice (step 1), still in place."""
        if not isinstance(rows, slice) or rows.step not in (None, 1):
            raise TypeError(f"RowSpans takes a slice of rows, got {rows!r}")
        return RowSpans(self.begins[rows], self.ends[rows], self.indices, self.data, self.n_features)

    def tocsr(self) -> sp.csr_matrix:
        """The rows gathered into a new CSR matrix."""
        lengths = self.ends - self.begins
        indptr = np.zeros(lengths.shape[0] + 1, np.int64)
        np.cumsum(lengths, out=indptr[1:])
        data = np.empty(self.nnz, self.data.dtype)
        indices = np.empty(self.nnz, self.indices.dtype)
        gather_span_pairs(self.data, self.indices, 0, self.begins, lengths, indptr, data, indices)
        index_dtype = np.int64 if self.nnz > INT32_MAX else np.int32
        return sp.csr_matrix((data, indices.astype(index_dtype, copy=False), indptr.astype(index_dtype)),
                             shape=self.shape)
