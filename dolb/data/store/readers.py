"""Reading rows of a stored dataset: whole decoded chunks, cached, gathered into blocks.

:class:`ChunkReader` decodes one array chunk by chunk and keeps the most recently used
decoded chunks; :class:`RowReader` builds ``(X, y)`` blocks of rows from them.
A :class:`ChunkCache` shared by many readers lets a worker process that runs many
small cells on the same dataset decode each chunk once, within a fixed byte budget.
Every decoded chunk is checked against the dataset's chunk manifest
(:mod:`dolb.data.store.manifest`) before it is used or cached: a chunk that is missing
(Zarr would give its fill value), damaged or copied from elsewhere is a
:class:`~dolb.errors.DataError`, never data.

Readers need only what :class:`StoredArrays` lists, which an opened
:class:`~dolb.data.store.dataset.Dataset` provides.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Protocol

import numpy as np
import scipy.sparse as sp
import zarr

from dolb.data.store.format import INT32_MAX, READ_ERRORS
from dolb.data.store.manifest import chunk_checksum
from dolb.errors import DataError

CACHE_CHUNKS = 2
"""Decoded chunks a :class:`RowReader` keeps per array."""


class StoredArrays(Protocol):
    """What the readers need of an opened dataset."""

    path: str
    fingerprint: str
    n_features: int
    sparse: bool
    arrays: dict[str, zarr.Array]
    checksums: dict[str, list[int]]
    indptr: np.ndarray | None


class ChunkCache:
    """Decoded chunks shared by readers, least recently used first out, holding at
    most ``max_bytes``; keyed by dataset fingerprint, array name, chunk length and chunk
    number.

    Examples
    --------
    >>> cache = ChunkCache(max_bytes=16)
    >>> cache.put(("fp", "y", 0), np.zeros(2))
    >>> cache.get(("fp", "y", 0))
    array([0., 0.])
    >>> cache.put(("fp", "y", 1), np.zeros(2))  # 32 bytes > 16: the older one goes
    >>> cache.get(("fp", "y", 0)) is None
    True
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = int(max_bytes)
        self.bytes = 0
        self._chunks: OrderedDict[tuple, np.ndarray] = OrderedDict()

    def get(self, key: tuple) -> np.ndarray | None:
        """The cached chunk under ``key``, or None."""
        chunk = self._chunks.get(key)
        if chunk is not None:
            self._chunks.move_to_end(key)
        return chunk

    def put(self, key: tuple, chunk: np.ndarray) -> None:
        """Keep ``chunk`` (if it fits at all), evicting the least recently used."""
        if chunk.nbytes > self.max_bytes or key in self._chunks:
            return
        self._chunks[key] = chunk
        self.bytes += chunk.nbytes
        while self.bytes > self.max_bytes:
            _, old = self._chunks.popitem(last=False)
            self.bytes -= old.nbytes


class ChunkReader:
    """Reads one array of a dataset whole chunk by whole chunk along axis 0, keeping the
    ``keep`` most recently used decoded chunks.

    Reading whole chunks means no chunk is decoded twice while its rows are still being
    asked for, every chunk decoded is checked against its manifest checksum before it is
    used, and a failure names exactly one chunk.

    Examples
    --------
    >>> reader = ChunkReader(open_dataset(tmp / "toy"), "y", keep=2)
    >>> reader.take(np.array([0, 2]))
    array([0., 2.])
    """

    def __init__(
        self, dataset: StoredArrays, name: str, keep: int = CACHE_CHUNKS, shared: ChunkCache | None = None
    ) -> None:
        self.dataset_path = dataset.path
        self.fingerprint = dataset.fingerprint
        self.shared = shared
        self.name = name
        self.array = dataset.arrays[name]
        self.checksums = dataset.checksums[name]
        self.dtype = self.array.dtype
        self.length = self.array.shape[0]
        self.chunk_length = self.array.chunks[0]
        self.n_chunks = math.ceil(self.length / self.chunk_length)
        self.keep = keep
        self._cache: OrderedDict[int, np.ndarray] = OrderedDict()

    def chunk(self, index: int) -> np.ndarray:
        """Decoded chunk ``index``, checked against the chunk manifest (read-only view of
        the cache: copy before changing)."""
        if index in self._cache:
            self._cache.move_to_end(index)
            return self._cache[index]
        if self.shared is not None:
            values = self.shared.get(self._shared_key(index))
            if values is not None:
                return values
        start = index * self.chunk_length
        stop = min(start + self.chunk_length, self.length)
        try:
            values = self.array[start:stop]
        except READ_ERRORS as exc:
            raise self._fault(index, f"is corrupted: {exc}") from exc
        if chunk_checksum(values) != self.checksums[index]:
            raise self._fault(
                index, "is missing, damaged or misplaced: its content does not match the chunk manifest"
            )
        values.flags.writeable = False
        if self.shared is not None:
            self.shared.put(self._shared_key(index), values)
        self._cache[index] = values
        while len(self._cache) > self.keep:
            self._cache.popitem(last=False)
        return values

    def _shared_key(self, index: int) -> tuple:
        """Key of chunk ``index`` in a shared cache: stores of equal content (equal
        fingerprints) may be chunked differently, so the chunk length is part of it."""
        return (self.fingerprint, self.name, self.chunk_length, index)

    def _fault(self, index: int, what: str) -> DataError:
        """The error naming the store, array, chunk, its file key and its rows or elements."""
        start = index * self.chunk_length
        stop = min(start + self.chunk_length, self.length)
        key = self.array.metadata.encode_chunk_key((index,) + (0,) * (self.array.ndim - 1))
        unit = "rows" if self.name in ("X", "y") else "elements"
        return DataError(
            f"dataset {self.dataset_path}: array {self.name!r} chunk {index} "
            f"(file {self.name}/{key}, {unit} {start}..{stop - 1}) {what}"
        )

    def span(self, start: int, stop: int) -> np.ndarray:
        """A new array holding elements ``start`` to ``stop - 1``."""
        if stop <= start:
            return np.empty((0, *self.array.shape[1:]), dtype=self.dtype)
        length = self.chunk_length
        pieces = [
            self.chunk(c)[max(start - c * length, 0) : stop - c * length]
            for c in range(start // length, (stop - 1) // length + 1)
        ]
        return np.concatenate(pieces)

    def take(self, positions: np.ndarray) -> np.ndarray:
        """A new array holding the elements at ``positions`` (sorted ascending)."""
        out = np.empty((positions.shape[0], *self.array.shape[1:]), dtype=self.dtype)
        if positions.shape[0] == 0:
            return out
        chunk_ids = positions // self.chunk_length
        cuts = np.flatnonzero(np.diff(chunk_ids)) + 1
        for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, positions.shape[0]]):
            c = int(chunk_ids[lo])
            out[lo:hi] = self.chunk(c)[positions[lo:hi] - c * self.chunk_length]
        return out


class RowReader:
    """Reads blocks of rows of one dataset, keeping a few decoded chunks per array so
    that consecutive blocks reuse them.

    Contiguous rows (a slice) cost one pass over the chunks they span. Rows in any
    other order are sorted, gathered chunk by chunk, then put back in the order asked
    for: a block costs one decode per distinct chunk it touches that is not cached, so
    a random permutation of a dataset much larger than the cache decodes about
    ``min(block rows, n_chunks)`` chunks per block, that is the whole dataset about
    ``n_rows / block rows`` times per pass. Bigger blocks make random orders cheaper.

    Parameters
    ----------
    dataset : StoredArrays
        An opened dataset.
    keep : int
        Decoded chunks kept per array.
    shared : ChunkCache, optional
        A cache shared with other readers (of any dataset) in this process.

    Examples
    --------
    >>> reader = RowReader(open_dataset(tmp / "toy"))
    >>> reader.read(np.array([1, 0]))[1]
    array([1., 0.])
    """

    def __init__(self, dataset: StoredArrays, keep: int = CACHE_CHUNKS, shared: ChunkCache | None = None) -> None:
        self.dataset = dataset
        self.readers = {
            name: ChunkReader(dataset, name, keep, shared) for name in dataset.arrays if name != "X/indptr"
        }

    def read(self, rows: slice | np.ndarray) -> tuple:
        """``(X, y)`` of a ``slice(start, stop)`` or of checked row numbers in any order."""
        if isinstance(rows, slice):
            return self._range(rows.start, rows.stop)
        if rows.shape[0] > 1 and np.all(rows[1:] - rows[:-1] == 1):
            return self._range(int(rows[0]), int(rows[-1]) + 1)
        order = np.argsort(rows, kind="stable")
        if np.all(order[1:] > order[:-1]):
            return self._sorted(rows)
        X, y = self._sorted(rows[order])
        inverse = np.empty_like(order)
        inverse[order] = np.arange(order.shape[0])
        return X[inverse], y[inverse]

    def _range(self, start: int, stop: int) -> tuple:
        """``(X, y)`` of rows ``start`` to ``stop - 1``."""
        y = self.readers["y"].span(start, stop)
        if not self.dataset.sparse:
            return np.ascontiguousarray(self.readers["X"].span(start, stop), dtype=np.float64), y
        pointers = self.dataset.indptr[start : stop + 1]
        first, last = int(pointers[0]), int(pointers[-1])
        data = self.readers["X/data"].span(first, last)
        indices = self.readers["X/indices"].span(first, last)
        return self._csr(data, indices, pointers - first), y

    def _sorted(self, rows: np.ndarray) -> tuple:
        """``(X, y)`` of unique ``rows`` sorted ascending."""
        y = self.readers["y"].take(rows)
        if not self.dataset.sparse:
            return np.ascontiguousarray(self.readers["X"].take(rows), dtype=np.float64), y
        starts = self.dataset.indptr[rows]
        lengths = self.dataset.indptr[rows + 1] - starts
        pointers = np.concatenate(([0], np.cumsum(lengths)))
        positions = np.repeat(starts - pointers[:-1], lengths) + np.arange(pointers[-1])
        data = self.readers["X/data"].take(positions)
        indices = self.readers["X/indices"].take(positions)
        return self._csr(data, indices, pointers), y

    def _csr(self, data: np.ndarray, indices: np.ndarray, pointers: np.ndarray) -> sp.csr_matrix:
        """A float64 CSR block from its pieces (indices and pointers in one index dtype)."""
        index_dtype = np.int32 if max(pointers[-1], self.dataset.n_features) <= INT32_MAX else np.int64
        return sp.csr_matrix(
            (
                np.asarray(data, dtype=np.float64),
                np.asarray(indices, dtype=index_dtype),
                np.asarray(pointers, dtype=index_dtype),
            ),
            shape=(pointers.shape[0] - 1, self.dataset.n_features),
        )
