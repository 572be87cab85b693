"""Fetching, ahead of a stream's reader, the chunks its blocks will need, from a store
behind a URL.

A stream knows its blocks before it reads any, and a block's rows say which chunks of
each array it needs (:func:`block_chunks`: the chunks of its rows, and for sparse rows
the chunks of their values and column indices by the row pointers).
:class:`ChunkPrefetcher` walks these needs in the order the reader will meet them and
fetches the stored bytes of each chunk (:meth:`~dolb.data.store.remote.RemoteChunks.fetch`)
on a small pool of threads, while the reader decodes earlier ones and the learner
learns. The reader takes them (:meth:`ChunkPrefetcher.take`) as it would read a local
chunk file, and says when a block is read (:meth:`ChunkPrefetcher.done`).

At most ``ahead`` (:data:`READ_AHEAD_CHUNKS`) stored chunks are held or in flight at
once. A chunk needed by several blocks is downloaded once: spilled to local disk (or
kept by the node chunk cache, :mod:`dolb.data.store.node_cache`) and read back by the
reader. The values read are those the reader would read without it: a chunk it did not
fetch, or whose fetch failed, the reader fetches itself. What is fetched, what is
skipped and how memory stays bounded: docs/design/data-store.md.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import shutil
import tempfile
import threading
from collections import deque
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from dolb.data.store.gather import consecutive, row_spans, touched_chunks
from dolb.data.store.readers import RowReader
from dolb.data.store.remote import CONCURRENT_REQUESTS, NOT_FETCHED, READ_AHEAD_CHUNKS


@contextlib.contextmanager
def fetched_ahead(dataset, blocks: list, shared=None, ahead: int = READ_AHEAD_CHUNKS):
    """A :class:`~dolb.data.store.readers.RowReader` of ``dataset`` (with the decoded
    chunks ``shared``) for reading ``blocks`` in order, the chunks they need fetched
    ahead by a :class:`ChunkPrefetcher` while in the context, when the store is behind a
    URL and of dolb's own codecs (else it reads as ever).

    >>> with fetched_ahead(open_dataset(tmp / "toy"), [np.array([2, 0])]) as reader:
    ...     reader.read(np.array([2, 0]))[1]
    array([2., 0.])
    """
    reader = RowReader(dataset, shared=shared)
    if dataset.remote is None or not all(r.remote is not None for r in reader.readers.values()):
        yield reader
        return
    prefetcher = ChunkPrefetcher(dataset, blocks, shared, ahead)
    reader.take_from(prefetcher)
    try:
        yield reader
    finally:
        prefetcher.close()


def block_chunks(dataset, block: slice | np.ndarray) -> list[tuple[str, int]]:
    """The chunks ``(array name, index)`` a reader of ``dataset`` decodes to read the
    rows ``block`` (a slice or row numbers), in the order it decodes them: those of
    ``y``, then of ``X`` (for sparse rows in a given order, each chunk of the values
    then the same of the column indices, when they are chunked alike).

    >>> block_chunks(open_dataset(tmp / "toy"), np.array([2, 0]))
    [('y', 0), ('X', 0)]
    """
    rows = np.arange(block.start, block.stop) if isinstance(block, slice) else np.asarray(block, dtype=np.int64)
    if rows.shape[0] == 0:
        return []
    needs = [("y", int(c)) for c in np.unique(rows // dataset.arrays["y"].chunks[0])]
    if not dataset.sparse:
        return needs + [("X", int(c)) for c in np.unique(rows // dataset.arrays["X"].chunks[0])]
    length = {name: dataset.arrays[name].chunks[0] for name in ("X/data", "X/indices")}
    indptr = dataset.indptr
    if consecutive(rows):
        first, last = int(indptr[rows[0]]), int(indptr[rows[-1] + 1])
        return needs + [(name, c) for name in ("X/data", "X/indices")
                        for c in range(first // length[name], (last - 1) // length[name] + 1) if last > first]
    starts, lengths = np.empty_like(rows), np.empty_like(rows)
    row_spans(indptr, rows, starts, lengths, np.empty(rows.shape[0] + 1, dtype=np.int64))
    touched = {name: np.flatnonzero(touched_chunks(starts, lengths, length[name],
                                                   -(-dataset.arrays[name].shape[0] // length[name]))).tolist()
               for name in length}
    if length["X/data"] == length["X/indices"]:
        return needs + [(name, c) for c in touched["X/data"] for name in ("X/data", "X/indices")]
    return needs + [(name, c) for name in length for c in touched[name]]


class ChunkPrefetcher:
    """Fetches the chunks of a stream's blocks ahead of its reader (see the module
    docstring), on a pool of :data:`~dolb.data.store.remote.CONCURRENT_REQUESTS`
    threads, each waiting on one request: as soon as a request lands, the next chunk
    is asked for, while there is room. :meth:`close` it when the stream ends.

    Parameters
    ----------
    dataset : Dataset
        The dataset, behind a URL (its ``remote`` fetches).
    blocks : list of slice or ndarray
        The stream's blocks, in order.
    shared : ChunkCache, optional
        The reader's shared cache of decoded chunks: what it holds is not fetched.
    ahead : int
        Most chunks held or in flight at once.

    Attributes
    ----------
    peak : int
        Most chunks held or in flight at once so far.
    peak_bytes : int
        Most bytes of fetched chunks held at once so far.
    spill : Path or None
        The spill folder (None: the stream needs no chunk twice, or the node cache
        keeps them).
    spill_reads : int
        Chunks read back from the spill folder so far.
    """

    def __init__(self, dataset, blocks: list, shared=None, ahead: int = READ_AHEAD_CHUNKS) -> None:
        self.remote = dataset.remote
        self.ahead = ahead
        self.peak = self.peak_bytes = self.spill_reads = 0
        self._needs = _needs(dataset, blocks, shared)
        self._last_use: dict[tuple, int] = {}  # chunk -> the last block that needs it
        needed_again = False
        if self.remote.node_cache is None:
            for number, key in _needs_of_blocks(dataset, blocks):
                needed_again = needed_again or key in self._last_use
                self._last_use[key] = number
        self.spill = _spill_folder() if needed_again else None
        self._spilled: set[tuple] = set()
        self._next = None  # a need taken from _needs, not yet placed
        self._held: dict[tuple, bytes | None] = {}
        self._held_bytes = 0
        self._flying: set[tuple] = set()
        self._uses: dict[tuple, deque] = {}  # chunk -> the blocks still to take it
        self._direct: dict[tuple, int] = {}  # chunk -> the block whose reader read it itself
        self._reading = 0  # the block being read
        self._changed = threading.Condition()
        self._stop = False
        self._pool = concurrent.futures.ThreadPoolExecutor(CONCURRENT_REQUESTS, thread_name_prefix="dolb-fetch")
        with self._changed:
            self._fill()

    def take(self, name: str, index: int) -> bytes | None | object:
        """The stored bytes of chunk ``index`` of array ``name`` fetched ahead (waited for
        while in flight) or read back from the spill folder (here, in the reader's
        thread), or :data:`~dolb.data.store.remote.NOT_FETCHED` when it was neither
        (the reader reads it itself, and it is not fetched for this block any more)."""
        key = (name, index)
        with self._changed:
            while key in self._flying and not self._stop:
                self._changed.wait()
            block = self._reading
            if key in self._held:
                raw = self._held[key]
                uses = self._uses[key]
                uses.popleft()
                if not uses:
                    self._let_go(key)
                return raw
            spilled = key in self._spilled
        raw = self._unspill(key, block) if spilled else None
        if raw is None:
            with self._changed:
                self._direct[key] = block
                self._spilled.discard(key)  # fetched again for a later block
            return NOT_FETCHED
        return raw

    def done(self, block: int) -> None:
        """Block number ``block`` is read: let go of what it and earlier blocks were to
        take and did not."""
        with self._changed:
            self._reading = block + 1
            self._direct = {key: number for key, number in self._direct.items() if number > block}
            for key in list(self._uses):
                uses = self._uses[key]
                while uses and uses[0] <= block:
                    uses.popleft()
                if not uses:
                    self._let_go(key)

    def close(self) -> None:
        """Stop fetching (requests in flight end first) and let go of all."""
        with self._changed:
            self._stop = True
            self._changed.notify_all()
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._held.clear()
        self._uses.clear()
        if self.spill is not None:
            shutil.rmtree(self.spill, ignore_errors=True)

    def _let_go(self, key: tuple) -> None:
        """Forget chunk ``key`` and ask for more (holding the lock); a chunk in flight is
        dropped when it lands."""
        del self._uses[key]
        raw = self._held.pop(key, None)
        self._held_bytes -= len(raw) if raw is not None else 0
        self._fill()
        self._changed.notify_all()

    def _fill(self) -> None:
        """Ask for the next chunks the blocks need while fewer than ``ahead`` are held or
        in flight and a thread of the pool is free (holding the lock); the needs of
        chunks already held or in flight are added to them."""
        while not self._stop and len(self._flying) < CONCURRENT_REQUESTS:
            self._next = self._next or next(self._needs, None)
            if self._next is None:
                return
            block, key = self._next
            if self._direct.get(key) == block or block < self._reading:  # the reader got there first
                pass
            elif key in self._uses or key in self._flying:  # (in flight for a block that let go of it)
                self._uses.setdefault(key, deque()).append(block)
            elif key in self._spilled:  # the reader reads it back itself
                pass
            elif len(self._held) + len(self._flying) >= self.ahead:
                return
            else:
                self._uses[key] = deque([block])
                self._flying.add(key)
                self.peak = max(self.peak, len(self._held) + len(self._flying))
                self._pool.submit(self._fetch, key, block)
            self._next = None

    def _fetch(self, key: tuple, block: int) -> None:
        """Fetch one chunk for block number ``block`` (on a thread of the pool) and hold
        it for the reader; keep it in the spill folder if a later block needs it. On a
        failure, let the reader fetch it itself, and meet the failure."""
        try:
            raw = self.remote.fetch([key])[0]
            fetched = True
        except Exception:  # the reader's own fetch raises it
            raw, fetched = None, False
        spilled = fetched and raw is not None and self._spill(key, block, raw)
        with self._changed:
            if spilled:
                self._spilled.add(key)
            self._flying.discard(key)
            if fetched and key in self._uses:
                self._held[key] = raw
                self._held_bytes += len(raw) if raw is not None else 0
                self.peak_bytes = max(self.peak_bytes, self._held_bytes)
            else:
                self._uses.pop(key, None)
            self._fill()
            self._changed.notify_all()

    def _spill_path(self, key: tuple) -> Path:
        name, index = key
        return self.spill / f"{name.replace('/', '-')}-{index}"

    def _spill(self, key: tuple, block: int, raw: bytes) -> bool:
        """Keep ``raw`` in the spill folder if a block after ``block`` needs chunk
        ``key``; whether it is kept (a full disk: it is fetched again)."""
        if self.spill is None or self._last_use.get(key, -1) <= block:
            return False
        try:
            self._spill_path(key).write_bytes(raw)
        except OSError:
            return False
        return True

    def _unspill(self, key: tuple, block: int) -> bytes | None:
        """Chunk ``key`` read back from the spill folder for block ``block`` (in the
        reader's thread, as a local chunk file; the file removed after the last block
        that needs it), or None when it cannot be read (the reader fetches it)."""
        path = self._spill_path(key)
        try:
            raw = path.read_bytes()
        except OSError:
            return None
        self.spill_reads += 1
        if self._last_use[key] <= block:
            with contextlib.suppress(OSError):
                path.unlink()
        return raw


def _spill_folder() -> Path | None:
    """A new spill folder under the temporary folder (``TMPDIR``), or None when none
    can be made there (then chunks needed again are fetched again)."""
    try:
        return Path(tempfile.mkdtemp(prefix="dolb-spill-"))
    except OSError:
        return None


def _needs_of_blocks(dataset, blocks: list) -> Iterator[tuple[int, tuple[str, int]]]:
    """``(block number, chunk)`` for each chunk each block decodes, in order: those of
    :func:`block_chunks`, less the one a block starts in when the previous block of the
    same array ended there (its reader still holds it decoded)."""
    last: dict[str, int] = {}
    for number, block in enumerate(blocks):
        chunks = block_chunks(dataset, block)
        first: dict[str, int] = {}
        for name, index in chunks:
            first.setdefault(name, index)
        for name, index in chunks:
            if not index == first[name] == last.get(name):
                yield number, (name, index)
        last.update((name, index) for name, index in chunks)


def _needs(dataset, blocks: list, shared) -> Iterator[tuple[int, tuple[str, int]]]:
    """``(block number, chunk)`` for each chunk each block will fetch, in order: those of
    :func:`_needs_of_blocks`, less those ``shared`` holds and those the node cache holds."""
    for number, (name, index) in _needs_of_blocks(dataset, blocks):
        array = dataset.arrays[name]
        if shared is not None and (dataset.fingerprint, name, array.chunks[0], index, array.dtype.str) in shared:
            continue
        if dataset.remote.in_node_cache(name, index):  # the reader reads it there
            continue
        yield number, (name, index)
