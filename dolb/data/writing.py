"""Writing datasets: checked, fingerprinted, chunked and checksummed, published atomically.

See :mod:`dolb.data.store` for the format. A local dataset is written into a temporary
sibling directory and renamed into place, so ``path`` holds either nothing, the old
dataset or the complete new one; a crash may leave a ``.<name>.tmp-*`` sibling behind,
never a half dataset at ``path``. Behind an fsspec URL (an object store cannot rename)
it is written in place and becomes a dolb dataset only when its attributes, written
last, appear.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import fsspec
import numcodecs
import numpy as np
import scipy.sparse as sp
import zarr
from zarr.codecs import BloscCodec, BytesCodec, Crc32cCodec

from dolb.data.readers import _INT32_MAX
from dolb.data.store import (
    FORMAT_VERSION,
    Dataset,
    _fingerprint_start,
    _little,
    _url_store,
    is_url,
    open_dataset,
)
from dolb.errors import ConfigError, DataError

CHUNK_BYTES = 2 << 20
"""Target size of a dense chunk when ``chunk_rows`` is not given."""
CHUNK_ELEMENTS = 1 << 20
"""Target number of elements of a sparse ``data``/``indices`` chunk by default."""
_SLAB_BYTES = 64 << 20  # input copied, checked, hashed and written this much at a time
_NUMERIC_KINDS = "biuf"
_ANNDATA_CSR = {"encoding-type": "csr_matrix", "encoding-version": "0.1.0"}


MIN_COMPRESSION = 1.5
"""An array is stored compressed (Blosc LZ4 with byte shuffle) only when a sample
compresses at least this much: raw chunks decode faster than LZ4 ones, so values that
barely compress (the float weights of text, say) are read faster raw."""
_SAMPLE_BYTES = 4 << 20
_LZ4 = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)


def _compresses(values: np.ndarray, dtype: np.dtype) -> bool:
    """Whether a sample of ``values`` (as ``dtype``) shrinks by MIN_COMPRESSION under LZ4."""
    rows = max(1, _SAMPLE_BYTES // max(1, dtype.itemsize * math.prod(values.shape[1:])))
    sample = np.ascontiguousarray(values[:rows], dtype=dtype)
    return sample.nbytes >= MIN_COMPRESSION * len(_LZ4.encode(sample)) if sample.nbytes else True


def _array_options(chunks: tuple[int, ...], compress: bool) -> dict[str, Any]:
    """Keyword arguments of ``create_array`` for a dolb array: little-endian bytes, LZ4
    when ``compress``, and a CRC32C checksum on every chunk."""
    lz4 = (BloscCodec(cname="lz4", clevel=5, shuffle="shuffle"),) if compress else ()
    return {
        "chunks": chunks,
        "serializer": BytesCodec(endian="little"),
        "compressors": (*lz4, Crc32cCodec()),
        "fill_value": 0,
        "config": {"write_empty_chunks": True},
    }


# --------------------------------------------------------------------------- writing


@dataclass
class _Part:
    """One array to write: in-memory values, stored dtype, chunking and value check.

    ``check(slab, start)`` raises DataError when the slab of ``values`` beginning at
    element ``start`` (along axis 0) holds a bad value.
    """

    name: str
    values: Any
    dtype: np.dtype
    chunk: int
    check: Callable[[np.ndarray, int], None]


def write_dataset(
    path: str | os.PathLike,
    X,
    y,
    *,
    chunk_rows: int | None = None,
    provenance: dict | None = None,
    overwrite: bool = False,
) -> Dataset:
    """Write features ``X`` and targets ``y`` as a dolb dataset at ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        Directory of the new Zarr store (parent directories are created), or an fsspec
        URL (``s3://bucket/store``, ``file:///data/store``). An object store cannot
        rename, so there the dataset is written in place and becomes a dolb dataset
        only when its group attributes are written, last.
    X : array_like or scipy.sparse matrix, shape (n, d)
        Features. Dense arrays keep their dtype (bool, integer or float); sparse
        matrices are stored as CSR with sorted, summed indices.
    y : array_like, shape (n,) or (n, k)
        Targets, dtype kept.
    chunk_rows : int, optional
        Rows per chunk (default: about 2 MB per dense chunk, about 1M non-zeros per
        sparse chunk).
    provenance : dict, optional
        Free-form JSON description of where the data comes from.
    overwrite : bool
        Replace an existing dolb dataset at ``path``.

    Returns
    -------
    Dataset
        The dataset just written, opened.

    Raises
    ------
    DataError
        Shapes disagree, no rows, a NaN/Inf value, a sparse index out of range, or a
        dataset exists at ``path`` and ``overwrite`` is false. Nothing is left at
        ``path`` then.

    Examples
    --------
    >>> ds = write_dataset(tmp / "toy", np.eye(3), np.arange(3.0))
    >>> ds.n_rows, ds.n_features, ds.sparse
    (3, 3, False)
    """
    if is_url(path):
        return _write_url(str(path), X, y, chunk_rows, provenance, overwrite)
    target = Path(path).absolute()
    provenance = _check_provenance(target, provenance)
    parts, shape = _parts(target, X, y, chunk_rows)
    _check_target(target, overwrite)
    temporary = _sibling(target, "tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _write_store(temporary, parts, shape, provenance, sparse=sp.issparse(X))
        _publish(temporary, target, overwrite)
    except OSError as exc:
        raise DataError(f"dataset {target}: cannot write the store: {exc}") from exc
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    return open_dataset(target)


def _check_provenance(target: Path, provenance: dict | None) -> dict:
    """Return ``provenance`` (default ``{}``) once it is known to be a JSON object."""
    provenance = {} if provenance is None else provenance
    try:
        if not isinstance(provenance, dict):
            raise TypeError(f"expected a dict, got {type(provenance).__name__}")
        json.dumps(provenance)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"dataset {target}: provenance must be a JSON object: {exc}") from exc
    return provenance


def _parts(target: Path, X, y, chunk_rows: int | None) -> tuple[list[_Part], tuple[int, int]]:
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


def _row_part(target: Path, name: str, values: np.ndarray, rows: int | None) -> _Part:
    """A part chunked by ``rows`` rows (default: about CHUNK_BYTES per chunk)."""
    length = _chunk_length(values, rows or CHUNK_BYTES // _row_bytes(values))
    return _Part(name, values, _little(values.dtype), length, _finite_rows(target, name))


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


def _row_bytes(values: np.ndarray) -> int:
    """Bytes of one row (one element along axis 0) of ``values``."""
    return values.dtype.itemsize * math.prod(values.shape[1:])


def _chunk_length(values, wanted: int) -> int:
    """``wanted`` elements per chunk along axis 0, clipped to [1, len(values)]."""
    return max(1, min(values.shape[0], wanted))


def _csr_parts(target: Path, X: sp.csr_matrix, rows: int | None) -> list[_Part]:
    """Parts ``X/data``, ``X/indices``, ``X/indptr`` of a canonical CSR matrix; data and
    indices chunks hold ``rows`` times the mean non-zeros per row (or CHUNK_ELEMENTS)."""
    n, d = X.shape
    elements = _chunk_length(X.data, math.ceil(rows * X.nnz / n) if rows else CHUNK_ELEMENTS)
    index_dtype = np.dtype("<i4") if d <= _INT32_MAX else np.dtype("<i8")

    def row_of(position: int) -> int:
        return int(np.searchsorted(X.indptr, position, side="right")) - 1

    return [
        _Part("X/data", X.data, _little(X.data.dtype), elements, _finite_elements(target, row_of)),
        _Part("X/indices", X.indices, index_dtype, elements, _in_range(target, d, row_of)),
        _Part("X/indptr", X.indptr, np.dtype("<i8"), _chunk_length(X.indptr, CHUNK_ELEMENTS), _no_check),
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


def _check_target(target: Path, overwrite: bool) -> None:
    """DataError unless ``target`` is free, or a dolb dataset we may overwrite."""
    if not target.exists() or (target.is_dir() and not any(target.iterdir())):
        return
    if not overwrite:
        raise DataError(f"dataset {target} already exists (pass overwrite=True to replace it)")
    if not _looks_like_dataset(target):
        raise DataError(f"{target} exists and is not a dolb dataset; refusing to overwrite it")


def _looks_like_dataset(path: Path) -> bool:
    """Whether ``path`` holds the group metadata of a dolb dataset (content unchecked)."""
    try:
        attributes = json.loads((path / "zarr.json").read_text()).get("attributes", {})
    except (OSError, ValueError, AttributeError):
        return False
    return isinstance(attributes, dict) and "dolb_dataset" in attributes


def _sibling(target: Path, tag: str) -> Path:
    """A fresh hidden path next to ``target``."""
    return target.with_name(f".{target.name}.{tag}-{uuid.uuid4().hex[:12]}")


def _write_url(url: str, X, y, chunk_rows, provenance, overwrite: bool) -> Dataset:
    """:func:`write_dataset` for an fsspec URL: written in place, the attributes that
    make it a dolb dataset last; a failed write is removed."""
    provenance = _check_provenance(url, provenance)
    parts, shape = _parts(url, X, y, chunk_rows)
    fs, root = fsspec.core.url_to_fs(url)
    if fs.exists(root):
        if not overwrite:
            raise DataError(f"dataset {url} already exists (pass overwrite=True to replace it)")
        try:
            open_dataset(url)
        except DataError:
            raise DataError(f"{url} exists and is not a dolb dataset; refusing to overwrite it") from None
        fs.rm(root, recursive=True)
    try:
        _write_store(_url_store(url, read_only=False), parts, shape, provenance, sparse=sp.issparse(X))
    except BaseException:
        with contextlib.suppress(OSError):
            fs.rm(root, recursive=True)
        raise
    return open_dataset(url)


def _write_store(store, parts: list[_Part], shape: tuple[int, int], provenance: dict, *, sparse: bool) -> None:
    """Write ``parts`` as a dolb Zarr group in ``store`` (a local directory or a Zarr
    store), fingerprint included; the dolb attributes are written last."""
    root = zarr.create_group(store=str(store) if isinstance(store, Path) else store, zarr_format=3)
    if sparse:
        root.create_group("X", attributes={**_ANNDATA_CSR, "shape": list(shape)})
    digest = _fingerprint_start([(p.name, p.dtype, p.values.shape) for p in parts])
    for part in parts:
        _write_part(root, part, digest)
    root.attrs.update(
        {
            "dolb_dataset": FORMAT_VERSION,
            "n_rows": shape[0],
            "n_features": shape[1],
            "fingerprint": digest.hexdigest(),
            "provenance": provenance,
        }
    )


def _write_part(root: zarr.Group, part: _Part, digest) -> None:
    """Write one array slab by slab, checking and hashing each slab on the way."""
    shape = part.values.shape
    chunks = (part.chunk, *shape[1:])
    options = _array_options(chunks, _compresses(part.values, part.dtype))
    array = root.create_array(part.name, shape=shape, dtype=part.dtype, **options)
    step = part.chunk * max(1, _SLAB_BYTES // (part.chunk * _row_bytes(part.values)))
    for start in range(0, shape[0], step):
        given = part.values[start : start + step]
        part.check(given, start)  # before the cast, which could wrap 64-bit indices
        slab = np.ascontiguousarray(given, dtype=part.dtype)
        digest.update(slab.data)
        array[start : start + slab.shape[0]] = slab


def _publish(temporary: Path, target: Path, overwrite: bool) -> None:
    """Rename the finished ``temporary`` store to ``target``, replacing an old dataset
    if ``overwrite``. Two writers racing for a free ``target``: the second gets DataError."""
    if overwrite and _looks_like_dataset(target):
        old = _sibling(target, "old")
        os.rename(target, old)
        try:
            os.rename(temporary, target)
        except OSError:
            os.rename(old, target)
            raise
        shutil.rmtree(old, ignore_errors=True)
        return
    try:
        os.rename(temporary, target)
    except OSError as exc:
        if not target.exists():
            raise
        raise DataError(f"dataset {target} already exists (pass overwrite=True to replace it)") from exc
