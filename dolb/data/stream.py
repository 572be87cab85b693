"""The block stream: rows of a dataset, block by block, read in the calling thread or,
from a store behind a URL, ahead in a background thread.

A stream reads with one :class:`~dolb.data.store.readers.RowReader`, so its memory is bounded
by the blocks in flight (at most ``prefetch`` queued, one being read, one being used),
the few decoded chunks the reader keeps per array, and, for sparse data, the row
pointer array ``indptr``. It never holds the dataset.

A local store is read in the calling thread (``prefetch=0``); a store behind a URL,
whose reads wait on the network, is read ahead by a thread (``prefetch=2``), as is any
stream given ``prefetch`` > 0. From a store behind a URL the chunks the blocks will need
are fetched ahead too (:mod:`dolb.data.store.read_ahead`), and a node chunk cache
(:mod:`dolb.data.store.node_cache`, switched on by ``DOLB_CHUNK_CACHE``) lets the
streams of one node fetch each chunk once.

Stored order reads contiguous row ranges, each chunk decoded once. A given order (such
as a seeded permutation of a subset) is read block by block, a block's rows copied in
the order asked for out of the decoded chunks they fall in
(:class:`~dolb.data.store.readers.RowReader`). Asked ``in_place`` (by a learner that
reads rows so, ``OnlineLearner.reads_spans``), a sparse block whose rows all lie in one
decoded chunk is not copied: it comes as :class:`~dolb.data.store.spans.RowSpans`.
Why a local store is read in the calling thread: docs/design/data-store.md.
"""

from __future__ import annotations

import functools
import queue
import threading
from collections.abc import Callable, Iterator

import numpy as np

from dolb.data.store.dataset import Dataset
from dolb.data.store.format import is_url
from dolb.data.store.read_ahead import fetched_ahead
from dolb.data.store.readers import ChunkCache, RowReader
from dolb.errors import ConfigError

READ_AHEAD_REMOTE = 2
"""Blocks read ahead from a store behind a URL."""
_END = object()
_POLL_SECONDS = 0.05


def stream_blocks(
    ds: Dataset,
    rows=None,
    *,
    block_size: int = 4096,
    prefetch: int | None = None,
    cache: ChunkCache | None = None,
    in_place: bool = False,
) -> Iterator[tuple]:
    """Yield ``(X_block, y_block)`` for ``rows`` of ``ds``, ``block_size`` rows at a time.

    Parameters
    ----------
    ds : Dataset
        The dataset to read.
    rows : array_like of int, optional
        Unique row numbers in the order wanted (default: every row in stored order).
    block_size : int
        Most rows in one block (the last block may be shorter).
    prefetch : int, optional
        Most blocks read ahead by a background thread and waiting in the queue; 0 reads
        every block in the calling thread, when it is asked for. Default: 0 for a local
        store, 2 for a store behind a URL (see the module's docstring).
    cache : ChunkCache, optional
        Decoded chunks shared with other streams in this process (see
        :class:`~dolb.data.store.readers.ChunkCache`); its byte budget adds to the memory bound.
    in_place : bool
        Sparse rows in a given order that lie in one decoded chunk come as
        :class:`~dolb.data.store.spans.RowSpans` over it, not gathered into a copy
        (for a learner that reads them so: ``OnlineLearner.reads_spans``). Such a block
        keeps its chunk alive, even once the cache let it go.

    Returns
    -------
    iterator of (X, y)
        Blocks of the same types as :meth:`Dataset.read`. Closing the iterator early
        (``break`` out of a loop) stops and joins the reading thread. A stream of one
        block is read in the calling thread: there is nothing to overlap.

    Raises
    ------
    ConfigError
        Bad ``rows``, ``block_size`` or ``prefetch`` (raised at the call).
    DataError
        A corrupted chunk (raised where the block that needs it is consumed).

    Examples
    --------
    >>> ds = write_dataset(tmp / "rows", np.arange(20.0).reshape(10, 2), np.arange(10.0))
    >>> order = np.random.default_rng(0).permutation(ds.n_rows)
    >>> ys = [y for X, y in stream_blocks(ds, order, block_size=4)]
    >>> [len(y) for y in ys], bool((np.concatenate(ys) == order).all())
    ([4, 4, 2], True)
    """
    block_size = _count(ds, "block_size", block_size, smallest=1)
    if prefetch is None:
        prefetch = READ_AHEAD_REMOTE if is_url(ds.path) else 0
    prefetch = _count(ds, "prefetch", prefetch, smallest=0)
    if rows is None:
        blocks = [slice(a, min(a + block_size, ds.n_rows)) for a in range(0, ds.n_rows, block_size)]
    else:
        index = ds.check_rows(rows)
        blocks = [index[a : a + block_size] for a in range(0, index.shape[0], block_size)]
    if ds.remote is not None:
        return _fetching(ds, blocks, prefetch, cache, in_place)
    read = functools.partial(RowReader(ds, shared=cache).read, in_place=in_place)
    if len(blocks) <= 1:
        return iter([read(block) for block in blocks])
    if prefetch == 0:
        return (read(block) for block in blocks)
    return _read_ahead(read, blocks, prefetch)


def _fetching(ds: Dataset, blocks: list, prefetch: int, cache: ChunkCache | None, in_place: bool) -> Iterator[tuple]:
    """The blocks of a store behind a URL, the chunks they need fetched ahead
    (:func:`~dolb.data.store.read_ahead.fetched_ahead`) for as long as the stream is
    read; each block read ahead by a thread too when ``prefetch`` > 0."""
    with fetched_ahead(ds, blocks, cache) as reader:

        def read(numbered: tuple[int, object]) -> tuple:
            number, block = numbered
            try:
                return reader.read(block, in_place=in_place)
            finally:
                if reader.prefetcher is not None:
                    reader.prefetcher.done(number)

        numbered = list(enumerate(blocks))
        if prefetch == 0 or len(blocks) <= 1:
            yield from map(read, numbered)
        else:
            yield from _read_ahead(read, numbered, prefetch)


def _count(ds: Dataset, name: str, value, smallest: int) -> int:
    """``value`` as an int if it is an integer of at least ``smallest``; ConfigError
    otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < smallest:
        what = "a positive integer" if smallest == 1 else f"an integer of at least {smallest}"
        raise ConfigError(f"stream of dataset {ds.path}: {name} must be {what}, got {value!r}")
    return int(value)


def _read_ahead(read: Callable, blocks: list, prefetch: int) -> Iterator[tuple]:
    """Yield ``read(block)`` for each block: the first read here (it is wanted at once:
    nothing to overlap, no hand-over to pay), the others by a background thread started
    before the first block is handed out."""
    first = read(blocks[0])
    ready: queue.Queue = queue.Queue(maxsize=prefetch)
    stop = threading.Event()
    thread = threading.Thread(
        target=_produce, args=(read, blocks[1:], ready, stop), name="dolb-stream", daemon=True
    )
    thread.start()
    try:
        yield first
        while (item := ready.get()) is not _END:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        thread.join()


def _produce(read: Callable, blocks: list, ready: queue.Queue, stop: threading.Event) -> None:
    """Read each block into ``ready`` until done, failed, or ``stop`` is set."""
    try:
        for block in blocks:
            if not _offer(ready, stop, read(block)):
                return
        _offer(ready, stop, _END)
    except BaseException as exc:  # handed to the consuming thread, which raises it
        _offer(ready, stop, exc)


def _offer(ready: queue.Queue, stop: threading.Event, item) -> bool:
    """Put ``item`` in ``ready`` once there is room; False if ``stop`` is set first."""
    while not stop.is_set():
        try:
            ready.put(item, timeout=_POLL_SECONDS)
            return True
        except queue.Full:
            continue
    return False
