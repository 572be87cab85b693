"""The X and y given to :func:`~dolb.data.store.writing.write_dataset`, checked and
cut into the arrays to write.

Dense input keeps its dtype; sparse input becomes canonical CSR (sorted, summed
indices) stored as ``X/data``, ``X/indices`` and ``X/indptr``. Each array comes with
its chunk length and a check of its values that the writer runs slab by slab, so that
a NaN, an Inf or an index out of range is reported with the row it is in.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from dolb.data.store.format import INT32_MAX, little
from dolb.errors import ConfigError, DataError

CHUNK_BYTES = 2 << 20
"""Default size of a dense chunk when ``chunk_rows`` is not given (the writer may choose
another, see :mod:`dolb.data.store.layout`)."""
CHUNK_ELEMENTS = 1 << 20
"""Default number of elements of a sparse ``data``/``indices`` chunk (likewise)."""
_NUMERIC_KINDS = "biuf"


@dataclass
class Part:
    """One array to write: in-memory values, stored dtype, chunking and value check.

    ``check(slab, start)`` raises DataError when the slab of ``values`` beginning at
    element ``start`` (along axis 0) holds a bad value.
    """

    name: str
    values: Any
    dtype: np.dtype
    chunk: int
    check: Callable[[np.ndarray, int], None]


def input_parts(target: Path, X, y, chunk_rows: int | None) -> tuple[list[Part], tuple[int, int]]:
    """The arrays to write for ``X`` and ``y``, in fingerprint order, and X's shape."""
    y = _numeric(target, "y", np.asarray(y))
    if sp.issparse(X):
        X = _canonical_csr(target, X)
    else:
        X = _numeric(target, "X", np.asarray(X))
        if X.ndim != 2:
            raise DataError(f"dataset {target}: X must be 2-D (rows, features), got shape {X.shape}")
    n, d = X.shape
    if n < 1 or d < 1:
        raise DataError(
            f"dataset {target}: X must have at least one row and one column, got shape {X.shape}"
        )
    if y.ndim not in (1, 2) or y.shape[0] != n or (y.ndim == 2 and y.shape[1] < 1):
        raise DataError(f"dataset {target}: y must have shape ({n},) or ({n}, k), got {y.shape}")
    rows = _check_chunk_rows(target, chunk_rows)
    x_parts = _csr_parts(target, X, rows) if sp.issparse(X) else [_row_part(target, "X", X, rows)]
    return x_parts + [_row_part(target, "y", y, rows)], (n, d)


def _row_part(target: Path, name: str, values: np.ndarray, rows: int | None) -> Part:
    """A part chunked by ``rows`` rows (default: about CHUNK_BYTES per chunk)."""
    length = _chunk_length(values, rows or CHUNK_BYTES // row_bytes(values))
    return Part(name, values, little(values.dtype), length, _finite_rows(target, name))


def _numeric(target: Path, name: str, values: np.ndarray) -> np.ndarray:
    """``values`` if its dtype is bool, integer or float; DataError otherwise."""
    if values.dtype.kind not in _NUMERIC_KINDS:
        raise DataError(f"dataset {target}: {name} must hold numbers, got dtype {values.dtype}")
    return values


def _canonical_csr(target: Path, X) -> sp.csr_matrix:
    """``X`` as a CSR matrix with a valid structure, sorted indices and no duplicates."""
    try:
        X = sp.csr_matrix(X)
    except (ValueError, TypeError) as exc:
        raise DataError(f"dataset {target}: X is a malformed sparse matrix: {exc}") from exc
    _numeric(target, "X", X.data)
    n, nnz = X.shape[0], X.indices.shape[0]
    indptr = X.indptr
    if (
        indptr.shape != (n + 1,)
        or indptr[0] != 0
        or indptr[-1] != nnz
        or X.data.shape != (nnz,)
        or np.any(np.diff(indptr) < 0)
    ):
        raise DataError(f"dataset {target}: X is a malformed CSR matrix (indptr inconsistent with data)")
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def _check_chunk_rows(target: Path, chunk_rows: int | None) -> int | None:
    """``chunk_rows`` as an int (or None), or ConfigError unless it is positive."""
    if chunk_rows is None:
        return None
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) or chunk_rows < 1:
        raise ConfigError(f"dataset {target}: chunk_rows must be a positive integer, got {chunk_rows!r}")
    return int(chunk_rows)


def row_bytes(values: np.ndarray) -> int:
    """Bytes of one row (one element along axis 0) of ``values``."""
    return values.dtype.itemsize * math.prod(values.shape[1:])


def _chunk_length(values, wanted: int) -> int:
    """``wanted`` elements per chunk along axis 0, clipped to [1, len(values)]."""
    return max(1, min(values.shape[0], wanted))


def _csr_parts(target: Path, X: sp.csr_matrix, rows: int | None) -> list[Part]:
    """Parts ``X/data``, ``X/indices``, ``X/indptr`` of a canonical CSR matrix; data and
    indices chunks hold ``rows`` times the mean non-zeros per row (or CHUNK_ELEMENTS)."""
    n, d = X.shape
    elements = _chunk_length(X.data, math.ceil(rows * X.nnz / n) if rows else CHUNK_ELEMENTS)
    index_dtype = np.dtype("<i4") if d <= INT32_MAX else np.dtype("<i8")

    def row_of(position: int) -> int:
        return int(np.searchsorted(X.indptr, position, side="right")) - 1

    return [
        Part("X/data", X.data, little(X.data.dtype), elements, _finite_elements(target, row_of)),
        Part("X/indices", X.indices, index_dtype, elements, _in_range(target, d, row_of)),
        Part("X/indptr", X.indptr, np.dtype("<i8"), _chunk_length(X.indptr, CHUNK_ELEMENTS), _no_check),
    ]


def _finite_rows(target: Path, name: str) -> Callable[[np.ndarray, int], None]:
    """Check of a row-major slab: DataError naming the first row with NaN or Inf."""

    def check(slab: np.ndarray, start: int) -> None:
        if slab.dtype.kind != "f":
            return
        bad = ~np.isfinite(slab.reshape(slab.shape[0], -1)).all(axis=1)
        if bad.any():
            row = start + int(np.argmax(bad))
            raise DataError(f"dataset {target}: {name} row {row} holds NaN or Inf")

    return check


def _finite_elements(target: Path, row_of: Callable[[int], int]) -> Callable[[np.ndarray, int], None]:
    """Check of a slab of CSR data: DataError naming the row of the first NaN or Inf."""

    def check(slab: np.ndarray, start: int) -> None:
        if slab.dtype.kind != "f":
            return
        bad = ~np.isfinite(slab)
        if bad.any():
            row = row_of(start + int(np.argmax(bad)))
            raise DataError(f"dataset {target}: X row {row} holds NaN or Inf")

    return check


def _in_range(target: Path, d: int, row_of: Callable[[int], int]) -> Callable[[np.ndarray, int], None]:
    """Check of a slab of CSR column indices: each must lie in [0, d)."""

    def check(slab: np.ndarray, start: int) -> None:
        bad = (slab < 0) | (slab >= d)
        if bad.any():
            position = int(np.argmax(bad))
            raise DataError(
                f"dataset {target}: X row {row_of(start + position)} has column index "
                f"{int(slab[position])} outside [0, {d})"
            )

    return check


def _no_check(slab: np.ndarray, start: int) -> None:
    """Check of an array whose values are valid by construction."""
