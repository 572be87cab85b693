"""Opening and reading a stored dataset (see :mod:`dolb.data.store.format` for the
layout), and verifying its content against its fingerprint.

Datasets are made by :func:`~dolb.data.store.writing.write_dataset`; this module opens
them, checks their structure and every array's metadata against the chunk manifest
(:mod:`dolb.data.store.manifest`) on opening, and reads rows of them, each chunk
checked against the manifest as it is read.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import zarr
import zarr.errors
import zarr.storage

from dolb.data.store.format import FORMAT_VERSION, READ_ERRORS, is_url, little, start_fingerprint, url_store
from dolb.data.store.gather import OUTSIDE, first_bad_row
from dolb.data.store.manifest import checked_manifest
from dolb.data.store.object_stores import reaching
from dolb.data.store.read_ahead import fetched_ahead
from dolb.data.store.readers import ChunkReader, RowReader
from dolb.data.store.remote import RemoteChunks
from dolb.errors import ConfigError, DataError


def open_dataset(path: str | os.PathLike) -> Dataset:
    """Open the dolb dataset at ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        Directory of a store written by :func:`write_dataset`, or its fsspec URL.

    Returns
    -------
    Dataset

    Raises
    ------
    DataError
        Nothing at ``path``, not a dolb dataset, an unknown format version, no chunk
        manifest or layout, an array whose metadata differs from the
        manifest's record, or members whose shapes disagree with the attributes.
    StoreFault
        The object store of ``path`` failed after retries (:mod:`dolb.data.store.object_stores`).

    Examples
    --------
    >>> ds = open_dataset(tmp / "toy")
    >>> ds.read(slice(0, 2))[1]
    array([0., 1.])
    """
    if is_url(path):
        with reaching(str(path)):  # its object store out of reach: a StoreFault naming it, no DataError
            return _opened(path)
    return _opened(path)


def _opened(path: str | os.PathLike) -> Dataset:
    """:func:`open_dataset`'s work."""
    if is_url(path):
        location, store = str(path), url_store(str(path), read_only=True)
    else:
        location = Path(path).absolute()
        if location.is_file():
            raise DataError(f"{location} is a file, not a dataset store: import it with an importer (such as "
                            'importer = "csv": see the pipeline reference), or write a store with '
                            "dolb.data.write_dataset")
        if not location.is_dir():
            raise DataError(f"no dataset at {location}")
        store = zarr.storage.LocalStore(location, read_only=True)
    try:
        root = zarr.open_group(store, mode="r")
        attributes = dict(root.attrs)
    except zarr.errors.GroupNotFoundError:
        found = "no dataset at {}" if is_url(path) else "{} is not a dolb dataset (no Zarr group)"
        raise DataError(found.format(location)) from None
    except READ_ERRORS as exc:
        raise DataError(f"{location} is not a dolb dataset (no Zarr group: {exc})") from exc
    if "dolb_dataset" not in attributes:
        raise DataError(f"{location} is not a dolb dataset (attribute 'dolb_dataset' missing)")
    if attributes["dolb_dataset"] != FORMAT_VERSION:
        raise DataError(f"dataset {location}: unsupported format version {attributes['dolb_dataset']!r}")
    return Dataset(location, root, attributes)


class Dataset:
    """An opened dolb dataset. Create it with :func:`write_dataset` or :func:`open_dataset`.

    Attributes
    ----------
    path : str
        Absolute directory of the store.
    n_rows, n_features : int
        Shape of X.
    sparse : bool
        Whether X is stored as CSR.
    fingerprint : str
        Hex sha256 of the content, computed at write time.
    provenance : dict
        The JSON description given at write time.
    checksums : dict of str to list of int
        The chunk manifest's checksum of each chunk of each array.
    layout : dict
        Each array's codec and chunk size and how they were chosen (group attribute
        ``layout``, see :mod:`dolb.data.store.layout`).
    decoders : dict of str to ChunkDecoder
        Each array's chunk decoder, made by the first reader that needs it
        (:mod:`dolb.data.store.decoding`).
    remote : RemoteChunks or None
        For a store behind a URL, what fetches its chunks
        (:mod:`dolb.data.store.remote`); None for a local store.

    Examples
    --------
    >>> ds = open_dataset(tmp / "toy")
    >>> X, y = ds.read(np.array([2, 0]))
    >>> X.shape, y.tolist()
    ((2, 3), [2.0, 0.0])
    """

    def __init__(self, location: Path, root: zarr.Group, attributes: dict) -> None:
        self.path = str(location)
        try:
            self.n_rows = int(attributes["n_rows"])
            self.n_features = int(attributes["n_features"])
            self.fingerprint = str(attributes["fingerprint"])
            self.provenance = dict(attributes["provenance"])
            self.layout = dict(attributes["layout"])
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"dataset {self.path}: attribute {exc} missing or malformed") from exc
        self.sparse = self._member(root, "X", zarr.Group, required=False) is not None
        names = ("X/data", "X/indices", "X/indptr", "y") if self.sparse else ("X", "y")
        self.arrays = {name: self._member(root, name, zarr.Array) for name in names}
        self.checksums = checked_manifest(self.path, attributes, self.arrays)
        self._check_shapes(root)
        self.indptr = None
        self.decoders = {}  # the readers' chunk decoders, by array name
        self.remote = RemoteChunks(self.fingerprint, self.arrays) if is_url(self.path) else None
        if self.sparse:
            self.indptr = ChunkReader(self, "X/indptr", keep=0).span(0, self.n_rows + 1)
            self._check_indptr()

    def __repr__(self) -> str:
        kind = "sparse" if self.sparse else "dense"
        return f"Dataset({self.path!r}, {self.n_rows} x {self.n_features} {kind})"

    def __reduce__(self):
        """Pickle as the path alone: unpickling re-opens the store (small Dask tasks)."""
        return open_dataset, (self.path,)

    def _member(self, root: zarr.Group, name: str, kind: type, *, required: bool = True):
        """The group member ``name`` if it is a ``kind``; DataError if required."""
        try:
            member = root[name]
        except (KeyError, *READ_ERRORS) as exc:
            if not required:
                return None
            raise DataError(
                f"dataset {self.path}: member {name!r} is missing or unreadable ({exc})"
            ) from exc
        if not isinstance(member, kind):
            if not required:
                return None
            raise DataError(
                f"dataset {self.path}: member {name!r} is not a Zarr {kind.__name__.lower()}"
            )
        return member

    def _check_shapes(self, root: zarr.Group) -> None:
        """DataError unless the arrays' shapes agree with n_rows and n_features."""
        n, d = self.n_rows, self.n_features
        y = self.arrays["y"]
        if y.ndim not in (1, 2) or y.shape[0] != n:
            raise DataError(f"dataset {self.path}: y has shape {y.shape}, expected {n} rows")
        if not self.sparse:
            shape = self.arrays["X"].shape
            if shape != (n, d):
                raise DataError(f"dataset {self.path}: X has shape {shape}, expected {(n, d)}")
            return
        attributes = dict(root["X"].attrs)
        if attributes.get("encoding-type") != "csr_matrix" or attributes.get("shape") != [n, d]:
            raise DataError(f"dataset {self.path}: group X is not a csr_matrix of shape {[n, d]}")
        nnz = self.arrays["X/data"].shape
        if self.arrays["X/indices"].shape != nnz or self.arrays["X/indptr"].shape != (n + 1,):
            raise DataError(
                f"dataset {self.path}: X/data, X/indices and X/indptr have inconsistent lengths"
            )

    def _check_indptr(self) -> None:
        """DataError unless indptr starts at 0, never decreases and ends at nnz."""
        indptr = self.indptr
        if indptr[0] != 0 or indptr[-1] != self.arrays["X/data"].shape[0] or np.any(np.diff(indptr) < 0):
            raise DataError(f"dataset {self.path}: X/indptr is not a valid CSR row pointer")

    def labels(self) -> np.ndarray:
        """All targets ``y``, in their stored dtype.

        Examples
        --------
        >>> open_dataset(tmp / "toy").labels()
        array([0., 1., 2.])
        """
        return ChunkReader(self, "y", keep=0).span(0, self.n_rows)

    def check_rows(self, rows) -> np.ndarray:
        """``rows`` as a new int64 array, or ConfigError unless it is a 1-D array of
        unique integer row numbers in ``[0, n_rows)``.

        Examples
        --------
        >>> open_dataset(tmp / "toy").check_rows([2, 0])
        array([2, 0])
        """
        index = np.asarray(rows)
        if index.size == 0:
            return np.empty(0, dtype=np.int64)
        if index.ndim != 1 or index.dtype.kind not in "iu":
            raise ConfigError(
                f"dataset {self.path}: rows must be a 1-D array of integers, "
                f"got {index.dtype} of shape {index.shape}"
            )
        index = index.astype(np.int64)  # a copy: later changes to ``rows`` cannot leak in
        row, problem = first_bad_row(index, self.n_rows)
        if problem == OUTSIDE:
            raise ConfigError(f"dataset {self.path}: row {row} is outside [0, {self.n_rows})")
        if problem:
            raise ConfigError(f"dataset {self.path}: row {row} is asked for twice")
        return index

    def read(self, rows) -> tuple:
        """Features and targets of ``rows``, in the order asked for.

        Parameters
        ----------
        rows : slice or array_like of int
            A slice, or unique row numbers in any order (may be empty).

        Returns
        -------
        X : numpy.ndarray or scipy.sparse.csr_matrix
            float64, shape (len(rows), n_features); C-contiguous when dense.
        y : numpy.ndarray
            Targets of those rows, stored dtype.

        Examples
        --------
        >>> X, y = open_dataset(tmp / "toy").read(slice(1, 3))
        >>> X.tolist(), y.tolist()
        ([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], [1.0, 2.0])
        """
        if isinstance(rows, slice):
            start, stop, step = rows.indices(self.n_rows)
            if step == 1:
                return RowReader(self).read(slice(start, max(start, stop)))  # spans: fetched together
            rows = np.arange(start, stop, step)
        rows = self.check_rows(rows)
        if self.remote is None:
            return RowReader(self).read(rows)
        with fetched_ahead(self, [rows]) as reader:  # a few chunks at a time, concurrently
            return reader.read(rows)

    def verify(self) -> int:
        """Re-read every chunk, checking it against the chunk manifest, and recompute the
        fingerprint.

        Returns
        -------
        int
            The number of chunks checked.

        Raises
        ------
        DataError
            A chunk cannot be decoded or is missing, damaged or misplaced (naming the
            array and chunk), or the content no longer matches the stored fingerprint.

        Examples
        --------
        >>> open_dataset(tmp / "toy").verify()
        2
        """
        digest = start_fingerprint([(name, a.dtype, a.shape) for name, a in self.arrays.items()])
        checked = 0
        for name in self.arrays:
            reader = ChunkReader(self, name, keep=0)
            for index in range(reader.n_chunks):
                chunk = np.ascontiguousarray(reader.chunk(index), dtype=little(reader.dtype))
                digest.update(chunk.data)
            checked += reader.n_chunks
        if digest.hexdigest() != self.fingerprint:
            raise DataError(
                f"dataset {self.path}: content does not match its fingerprint "
                f"(stored {self.fingerprint[:12]}..., computed {digest.hexdigest()[:12]}...)"
            )
        return checked
