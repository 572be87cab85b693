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
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import numpy as np
import scipy.sparse as sp
import zarr

from dolb.data.store.decoding import ChunkDecoder
from dolb.data.store.format import INT32_MAX, READ_ERRORS, is_url
from dolb.data.store.gather import (
    consecutive,
    gather_rows,
    gather_span_pairs,
    gather_spans,
    row_spans,
    spans_in_one_chunk,
    touched_chunks,
)
from dolb.data.store.manifest import chunk_checksum
from dolb.data.store.remote import NOT_FETCHED, READ_AHEAD_CHUNKS, RemoteChunks
from dolb.data.store.spans import RowSpans
from dolb.errors import DataError

CACHE_CHUNKS = 2
"""Decoded chunks a :class:`RowReader` keeps per array."""
CHECKED = "dolb_checked"
"""Attribute set to True on every CSR block a :class:`RowReader` builds: its values are
finite and every row's column indices strictly increase, as
:func:`~dolb.data.store.writing.write_dataset` checked and the chunk manifest confirms
chunk by chunk, so a consumer may skip checking them again. A new matrix made from it
(a slice, a copy) does not carry the attribute."""


class StoredArrays(Protocol):
    """What the readers need of an opened dataset."""

    path: str
    fingerprint: str
    n_features: int
    sparse: bool
    arrays: dict[str, zarr.Array]
    checksums: dict[str, list[int]]
    indptr: np.ndarray | None
    decoders: dict[str, ChunkDecoder]  # filled by the readers, one per array
    remote: RemoteChunks | None  # fetches chunks of a store behind a URL


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

    def __contains__(self, key: tuple) -> bool:  # whether a chunk is cached under ``key``, without using it
        return key in self._chunks

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


def _decoder(dataset: StoredArrays, name: str) -> ChunkDecoder:
    """The decoder of array ``name``, made once per opened dataset (its codec pipeline
    read once, not once per stream)."""
    decoder = dataset.decoders.get(name)
    if decoder is None:
        folder = None if is_url(dataset.path) else Path(dataset.path, *name.split("/"))
        decoder = dataset.decoders[name] = ChunkDecoder(dataset.arrays[name], folder)
    return decoder


class ChunkReader:
    """Reads one array of a dataset whole chunk by whole chunk along axis 0, keeping the
    ``keep`` most recently used decoded chunks.

    Reading whole chunks means no chunk is decoded twice while its rows are still being
    asked for, every chunk decoded is checked against its manifest checksum before it is
    used, and a failure names exactly one chunk.

    Examples
    --------
    >>> reader = ChunkReader(open_dataset(tmp / "toy"), "y", keep=2)
    >>> reader.rows(np.array([2, 0]))
    array([2., 0.])
    """

    def __init__(
        self, dataset: StoredArrays, name: str, keep: int = CACHE_CHUNKS, shared: ChunkCache | None = None
    ) -> None:
        self.dataset_path = dataset.path
        self.fingerprint = dataset.fingerprint
        self.shared = shared
        self.name = name
        self.checksums = dataset.checksums[name]
        self.decoder = _decoder(dataset, name)  # the array's facts, read once per opened dataset
        self.dtype = self.decoder.dtype
        self.row_shape = self.decoder.shape[1:]
        self.length = self.decoder.shape[0]
        self.chunk_length = self.decoder.chunk_shape[0]
        self.n_chunks = math.ceil(self.length / self.chunk_length)
        self.width = math.prod(self.row_shape)  # elements of a row
        self.keep = keep
        self._cache: OrderedDict[tuple, np.ndarray] = OrderedDict()  # by (number, dtype)
        # the stored bytes of a URL store's chunks: fetched here, or taken from a prefetcher
        self.remote = dataset.remote if self.decoder.plain else None
        self.prefetched: Callable[[str, int], object] | None = None  # bytes, None or NOT_FETCHED
        self._fetched: dict[int, bytes | None] = {}

    def chunk(self, index: int, dtype: np.dtype | None = None) -> np.ndarray:
        """Decoded chunk ``index``, checked against the chunk manifest (read-only view of
        the cache: copy before changing); converted to ``dtype`` when given, once, and
        cached so, beside the decoded chunk."""
        dtype = self.dtype if dtype is None else np.dtype(dtype)
        key = (index, dtype.str)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        if self.shared is not None:
            values = self.shared.get(self._shared_key(index, dtype))
            if values is not None:
                return values
        if dtype != self.dtype:
            values = self.chunk(index).astype(dtype)
            values.flags.writeable = False
            return self._keep(key, values)
        start = index * self.chunk_length
        length = min(self.chunk_length, self.length - start)
        try:
            if self.remote is None:
                values = self.decoder.decode(index, length)
            else:
                raw, checked = self._stored_bytes(index)
                values = self.decoder.decode_bytes(raw, length, checked)
        except READ_ERRORS as exc:
            raise self._fault(index, f"is corrupted: {exc}") from exc
        if chunk_checksum(values) != self.checksums[index]:
            raise self._fault(index, "is missing, damaged or misplaced: its content does not match the chunk manifest")
        values.flags.writeable = False
        return self._keep(key, values)

    def _stored_bytes(self, index: int) -> tuple[bytes | None, bool]:
        """The stored bytes of chunk ``index`` of a URL store: fetched with others
        (:meth:`fetch_together`), read from the node cache, taken from the prefetcher,
        or fetched now; and whether their CRC32C was checked already (the node cache
        checks what it serves)."""
        if index in self._fetched:
            return self._fetched.pop(index), False
        if self.prefetched is not None and (raw := self.prefetched(self.name, index)) is not NOT_FETCHED:
            return raw, False
        raw = self.remote.from_node_cache(self.name, index)
        return (raw, True) if raw is not None else (self.remote.fetch([(self.name, index)])[0], False)

    def fetch_together(self, indices: range) -> None:
        """From a URL store read without a prefetcher, fetch at once (concurrently) the
        chunks ``indices`` not decoded yet, at most
        :data:`~dolb.data.store.read_ahead.READ_AHEAD_CHUNKS` of them (the bound of a
        prefetcher's memory), ready for :meth:`chunk`."""
        if self.remote is None or self.prefetched is not None:
            return
        wanted = [c for c in indices if (c, self.dtype.str) not in self._cache and c not in self._fetched][
            :READ_AHEAD_CHUNKS]
        if len(wanted) > 1:
            self._fetched.update(zip(wanted, self.remote.fetch([(self.name, c) for c in wanted]), strict=True))

    def _keep(self, key: tuple, values: np.ndarray) -> np.ndarray:
        """Cache chunk ``values`` (read-only) under ``key`` (its number and dtype)."""
        if self.shared is not None:
            self.shared.put(self._shared_key(*key), values)
        self._cache[key] = values
        while len(self._cache) > self.keep:
            self._cache.popitem(last=False)
        return values

    def _shared_key(self, index: int, dtype: np.dtype | str) -> tuple:
        """Key of chunk ``index`` as ``dtype`` in a shared cache: stores of equal content
        (equal fingerprints) may be chunked differently, so the chunk length is part of
        it."""
        return (self.fingerprint, self.name, self.chunk_length, index, np.dtype(dtype).str)

    def _fault(self, index: int, what: str) -> DataError:
        """The error naming the store, array, chunk, its file key and its rows or elements."""
        start = index * self.chunk_length
        stop = min(start + self.chunk_length, self.length)
        key = self.decoder.key(index)
        unit = "rows" if self.name in ("X", "y") else "elements"
        return DataError(
            f"dataset {self.dataset_path}: array {self.name!r} chunk {index} "
            f"(file {self.name}/{key}, {unit} {start}..{stop - 1}) {what}"
        )

    def span(self, start: int, stop: int, dtype: np.dtype | None = None, view: bool = False) -> np.ndarray:
        """A new array (of ``dtype``, default the stored one) holding elements ``start``
        to ``stop - 1``: one copy, converted on the way, a slice of each chunk; with
        ``view``, when the span lies in one chunk, a read-only view of the decoded chunk
        instead, converted to ``dtype`` (once a chunk, and cached so: the blocks of a
        chunk of float32 values read in order are views of its float64 copy, not each
        converted anew, as the rows left in place are)."""
        length = self.chunk_length
        if view and stop > start and start // length == (stop - 1) // length:
            c = start // length
            return self.chunk(c, dtype)[start - c * length : stop - c * length]
        out = np.empty((max(stop - start, 0), *self.row_shape), dtype=self.dtype if dtype is None else dtype)
        chunks = range(start // length, (stop - 1) // length + 1) if stop > start else range(0)
        for c in chunks:
            if c not in self._fetched:
                self.fetch_together(chunks[chunks.index(c):])
            first = max(start, c * length)
            last = min(stop, (c + 1) * length)
            out[first - start : last - start] = self.chunk(c)[first - c * length : last - c * length]
        return out

    def gather(self, starts: np.ndarray, lengths: np.ndarray, out_ptr: np.ndarray, out: np.ndarray) -> None:
        """Copy span ``i`` (elements ``starts[i]`` to ``starts[i] + lengths[i] - 1`` of the
        array flattened, in any order) into ``out[out_ptr[i]:out_ptr[i + 1]]``, each chunk
        decoded at most once (see :mod:`dolb.data.store.gather`)."""
        flat = out.reshape(-1)
        size = self.chunk_length * self.width  # elements of a chunk, flattened
        for c in np.flatnonzero(touched_chunks(starts, lengths, size, self.n_chunks)).tolist():
            gather_spans(self.chunk(c).reshape(-1), c * size, starts, lengths, out_ptr, flat)

    def rows(self, rows: np.ndarray, dtype: np.dtype | None = None) -> np.ndarray:
        """A new array (of ``dtype``, default the stored one) holding the elements along
        axis 0 at ``rows``, in the order given (consecutive rows: one span)."""
        if rows.shape[0] and consecutive(rows):
            return self.span(int(rows[0]), int(rows[-1]) + 1, dtype)
        if self.n_chunks == 1:  # NumPy's take: half the time of a compiled call here
            return self.chunk(0).take(rows, axis=0).astype(self.dtype if dtype is None else dtype, copy=False)
        out = np.empty((rows.shape[0], *self.row_shape), dtype=self.dtype if dtype is None else dtype)
        flat = out.reshape(rows.shape[0], self.width)
        for c in np.flatnonzero(np.bincount(rows // self.chunk_length)):
            chunk = self.chunk(int(c))
            gather_rows(chunk.reshape(chunk.shape[0], self.width), int(c) * self.chunk_length, rows, flat)
        return out


def _index_dtype(nnz: int, n_features: int) -> np.dtype:
    """int32 for the indices and pointers of a CSR block when they fit, else int64."""
    return np.dtype(np.int32 if max(nnz, n_features) <= INT32_MAX else np.int64)


class RowReader:
    """Reads blocks of rows of one dataset, keeping a few decoded chunks per array so
    that consecutive blocks reuse them.

    Rows in any order are gathered straight into the block, in the order asked for, by
    one compiled pass per chunk they touch (:mod:`dolb.data.store.gather`), converting
    to float64 features on the way: nothing is sorted and nothing put back. A block
    costs one decode per distinct chunk it touches that is not cached, so a random
    permutation of a dataset much larger than the cache decodes about
    ``min(block rows, n_chunks)`` chunks per block, that is the whole dataset about
    ``n_rows / block rows`` times per pass. Bigger blocks make random orders cheaper.
    Asked ``in_place``, sparse rows that lie in one chunk are not copied: the block is
    a :class:`~dolb.data.store.spans.RowSpans` over the chunk.

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
        self.prefetcher = None

    def take_from(self, prefetcher) -> None:
        """Take the stored bytes of a URL store's chunks from ``prefetcher`` (a
        :class:`~dolb.data.store.read_ahead.ChunkPrefetcher`, kept as ``prefetcher``),
        or (None) fetch them."""
        self.prefetcher = prefetcher
        for reader in self.readers.values():
            reader.prefetched = None if prefetcher is None else prefetcher.take

    def read(self, rows: slice | np.ndarray, in_place: bool = False) -> tuple:
        """``(X, y)`` of a ``slice(start, stop)`` or of checked row numbers in any order;
        with ``in_place``, rows not in stored order that all lie in one chunk of the
        values and one of the column indices come as :class:`~.spans.RowSpans` over the
        decoded chunks (the values converted to float64 once a chunk, and cached so;
        int32 indices), not gathered."""
        if isinstance(rows, slice):
            rows = np.arange(rows.start, max(rows.start, rows.stop), dtype=np.int64)
        rows = np.asarray(rows, dtype=np.int64)
        y = self.readers["y"].rows(rows)
        if not self.dataset.sparse:
            return self.readers["X"].rows(rows, np.dtype(np.float64)), y
        indptr = self.dataset.indptr
        if rows.shape[0] and consecutive(rows):  # one span of each array
            first, last = int(indptr[rows[0]]), int(indptr[rows[-1] + 1])
            index_dtype = _index_dtype(last - first, self.dataset.n_features)
            # views of the decoded chunks where they can be: read-only, shared with the cache
            data = self.readers["X/data"].span(first, last, np.dtype(np.float64), view=True)
            indices = self.readers["X/indices"].span(first, last, index_dtype, view=True)
            pointers = (indptr[rows[0] : rows[-1] + 2] - first).astype(index_dtype)
        else:
            if in_place and (block := self._in_place(rows)) is not None:
                return block, y
            starts, lengths = np.empty_like(rows), np.empty_like(rows)
            pointers = np.empty(rows.shape[0] + 1, dtype=np.int64)
            row_spans(indptr, rows, starts, lengths, pointers)
            index_dtype = _index_dtype(int(pointers[-1]), self.dataset.n_features)
            data = np.empty(int(pointers[-1]), dtype=np.float64)
            indices = np.empty(int(pointers[-1]), dtype=index_dtype)
            self._gather_csr(starts, lengths, pointers, data, indices)
            pointers = pointers.astype(index_dtype)
        X = sp.csr_matrix((rows.shape[0], self.dataset.n_features))
        # set, not passed: SciPy would copy a view of a read-only chunk (and check it again)
        X.data, X.indices, X.indptr = data, indices, pointers
        setattr(X, CHECKED, True)
        return X, y

    def _in_place(self, rows: np.ndarray) -> RowSpans | None:
        """``rows`` as :class:`~.spans.RowSpans` over the decoded chunks, when one chunk
        of the values and the same of the column indices hold them all, and the indices
        are stored as the driver reads them (int32); else None. One compiled pass finds
        the rows and their chunk."""
        values, columns = self.readers["X/data"], self.readers["X/indices"]
        if values.chunk_length != columns.chunk_length or columns.dtype != np.int32:
            return None
        # int32, as the driver reads CSR row pointers, unless positions in the dataset do not fit
        pointer_dtype = np.int32 if int(self.dataset.indptr[-1]) <= INT32_MAX else np.int64
        begins, ends = np.empty(rows.shape, pointer_dtype), np.empty(rows.shape, pointer_dtype)
        chunk, nnz = spans_in_one_chunk(self.dataset.indptr, rows, values.chunk_length, begins, ends)
        if chunk < 0:
            return None
        return RowSpans(begins, ends, columns.chunk(chunk), values.chunk(chunk, np.dtype(np.float64)),
                        self.dataset.n_features, int(nnz))

    def _gather_csr(self, starts, lengths, spans, data, indices) -> None:
        """Values and column indices of the spans, in one pass per chunk when the two
        arrays are chunked alike (as dolb writes them)."""
        values, columns = self.readers["X/data"], self.readers["X/indices"]
        if values.chunk_length != columns.chunk_length:
            values.gather(starts, lengths, spans, data)
            columns.gather(starts, lengths, spans, indices)
            return
        size = values.chunk_length
        for c in np.flatnonzero(touched_chunks(starts, lengths, size, values.n_chunks)).tolist():
            gather_span_pairs(values.chunk(c), columns.chunk(c), c * size, starts, lengths, spans, data, indices)
