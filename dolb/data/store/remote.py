"""The stored bytes of chunks of a store behind a URL, fetched many at once.

A local store's chunk is a file read in microseconds; an object store's is a request
that waits tens of milliseconds on the network and the server, during which one
request at a time leaves both idle. :meth:`RemoteChunks.fetch` asks for many chunks
at once, as concurrent requests on Zarr's event loop (``asyncio.gather`` of the
store's asynchronous ``get``, at most :data:`CONCURRENT_REQUESTS` in flight), and
serves from the node's chunk cache (:mod:`dolb.data.store.node_cache`) those it holds.
The bytes are decoded by the reader as a local chunk file's are
(:meth:`~dolb.data.store.decoding.ChunkDecoder.decode_bytes`) and checked against the
chunk manifest as every chunk is. Which chunks to fetch ahead, and when, is
:mod:`dolb.data.store.read_ahead`'s job.
"""

from __future__ import annotations

import asyncio
import threading

import zarr
from zarr.core.buffer import default_buffer_prototype
from zarr.core.sync import sync

from dolb.data.store.node_cache import NodeCache, node_cache_from_environment
from dolb.identity import digest

CONCURRENT_REQUESTS = 4
"""Requests a stream keeps in flight at once (how it was chosen: docs/design/data-store.md)."""

READ_AHEAD_CHUNKS = 8
"""Stored chunks a stream from a URL holds or has in flight at most, ahead of its
reader (:mod:`dolb.data.store.read_ahead`): the bytes of two or three of dolb's chunks
of each array (1M elements at most, compressed), about as many as the decoded chunks
its reader keeps."""

NOT_FETCHED = object()
"""What a prefetcher's ``take`` returns for a chunk it did not fetch
(:meth:`~dolb.data.store.read_ahead.ChunkPrefetcher.take`)."""


class RemoteChunks:
    """Fetches the stored bytes of chunks of one dataset's arrays from its store.

    Parameters
    ----------
    fingerprint : str
        The dataset's content fingerprint (the node cache's key).
    arrays : dict of str to zarr.Array
        The dataset's arrays, by name.
    node_cache : NodeCache, optional
        The node's chunk cache (default: the one the environment asks for, if any).

    Attributes
    ----------
    requests : int
        Chunks asked of the store so far (not counting those the node cache served).
    """

    def __init__(self, fingerprint: str, arrays: dict[str, zarr.Array], node_cache: NodeCache | None = None) -> None:
        self.arrays = arrays
        self.node_cache = node_cache if node_cache is not None else node_cache_from_environment()
        self.requests = 0
        self._lock = threading.Lock()
        self._places = {name: f"{fingerprint}/{name.replace('/', '-')}-{_layout_hash(a)}" for name, a in arrays.items()}

    def store_key(self, name: str, index: int) -> str:
        """The key of chunk ``index`` of array ``name`` in the store."""
        array = self.arrays[name]
        chunk = array.metadata.encode_chunk_key((index,) + (0,) * (array.ndim - 1))
        return f"{array.path}/{chunk}" if array.path else chunk

    def fetch(self, wanted: list[tuple[str, int]]) -> list[bytes | None]:
        """The stored bytes of each chunk ``(array name, index)`` of ``wanted`` (None for
        a chunk the store does not have), the node cache's first, the others asked of the
        store concurrently (and then kept in the node cache).

        Raises
        ------
        Exception
            What the store raises for a failed request (the first of them).
        """
        found: list[bytes | None] = [None] * len(wanted)
        missing = []
        for i, (name, index) in enumerate(wanted):
            raw = self.node_cache.get(self._cache_key(name, index)) if self.node_cache is not None else None
            if raw is None:
                missing.append(i)
            found[i] = raw
        if missing:
            with self._lock:
                self.requests += len(missing)
            store = next(iter(self.arrays.values())).store
            keys = [self.store_key(*wanted[i]) for i in missing]
            for i, raw in zip(missing, sync(_get_all(store, keys)), strict=True):
                found[i] = raw
                if raw is not None and self.node_cache is not None:
                    self.node_cache.put(self._cache_key(*wanted[i]), raw)
        return found

    def from_node_cache(self, name: str, index: int) -> bytes | None:
        """The stored bytes of chunk ``index`` of array ``name`` if the node cache holds
        them (a local file read, no request), else None."""
        return self.node_cache.get(self._cache_key(name, index)) if self.node_cache is not None else None

    def in_node_cache(self, name: str, index: int) -> bool:
        """Whether the node cache holds chunk ``index`` of array ``name`` (now)."""
        return self.node_cache is not None and self.node_cache.holds(self._cache_key(name, index))

    def _cache_key(self, name: str, index: int) -> str:
        array = self.arrays[name]
        return f"{self._places[name]}/{array.metadata.encode_chunk_key((index,) + (0,) * (array.ndim - 1))}"


async def _get_all(store, keys: list[str]) -> list[bytes | None]:
    """``store.get`` of every key, at most :data:`CONCURRENT_REQUESTS` at once."""
    prototype = default_buffer_prototype()
    limit = asyncio.Semaphore(CONCURRENT_REQUESTS)

    async def get(key: str) -> bytes | None:
        async with limit:
            buffer = await store.get(key, prototype)
        return None if buffer is None else buffer.to_bytes()

    return await asyncio.gather(*(get(key) for key in keys))


def _layout_hash(array: zarr.Array) -> str:
    """A short hash of an array's Zarr metadata: its dtype, shape, chunks and codecs."""
    return digest(array.metadata.to_dict(), length=16)
