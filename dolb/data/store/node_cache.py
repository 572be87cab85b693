"""A node's chunk cache: the stored bytes of chunks read from stores behind URLs, in a
local folder the node's worker processes share, so its cells fetch a chunk once.

Switched on by the worker processes' environment (inherited from the client on an
embedded cluster; set by a cluster file or a job script on other nodes)::

    DOLB_CHUNK_CACHE=/local/disk/dolb-chunks   # the folder (off when unset or empty)
    DOLB_CHUNK_CACHE_BYTES=20GB                # its bound (default 10GB; Dask's units)

A chunk is kept as its object's bytes at ``<folder>/<fingerprint>/<array>-<layout>/<chunk
key>`` (the store's content fingerprint, a hash of the array's Zarr metadata), so a
changed store is never served another's chunks. What it serves is checked as any chunk
is; the folder stays under ``max_bytes``, the least recently used files removed first.
How it is keyed, bounded and shared, and why not fsspec's caches: docs/design/data-store.md.

Examples
--------
>>> import crc32c
>>> cache = NodeCache(tmp / "chunks", max_bytes=1 << 20)
>>> body = b"abcd"
>>> raw = body + crc32c.crc32c(body).to_bytes(4, "little")
>>> cache.put("fp/y-0123/c/0", raw)
>>> cache.get("fp/y-0123/c/0") == raw, cache.get("fp/y-0123/c/1")
(True, None)
"""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path

import crc32c

from dolb.errors import ConfigError

FOLDER_VARIABLE = "DOLB_CHUNK_CACHE"
BYTES_VARIABLE = "DOLB_CHUNK_CACHE_BYTES"
DEFAULT_BYTES = "10GB"
KEEP_AFTER_EVICTION = 0.9
"""Share of ``max_bytes`` the folder is brought back under when it is over."""


class NodeCache:
    """Chunk bytes in a local folder, at most about ``max_bytes`` of them (see the
    module docstring).

    Parameters
    ----------
    folder : path
        The cache's folder (made when needed).
    max_bytes : int
        Its bound.
    """

    def __init__(self, folder: str | os.PathLike, max_bytes: int) -> None:
        self.folder = Path(folder)
        self.max_bytes = int(max_bytes)
        self.hits = self.misses = 0
        self._written = 0  # bytes this process added since it last scanned the folder
        self._total = None  # the folder's bytes at the last scan (None: not scanned yet)

    def get(self, key: str) -> bytes | None:
        """The bytes kept under ``key`` (a relative path), or None when there are none
        or their CRC32C trailer does not match them (the file is then removed)."""
        path = self.folder / key
        try:
            raw = path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            self.misses += 1
            return None
        if len(raw) < 4 or crc32c.crc32c(memoryview(raw)[:-4]) != int.from_bytes(raw[-4:], "little"):
            path.unlink(missing_ok=True)
            self.misses += 1
            return None
        with contextlib.suppress(FileNotFoundError):
            os.utime(path)  # used now: evicted last
        self.hits += 1
        return raw

    def holds(self, key: str) -> bool:
        """Whether there are bytes under ``key`` (without reading them)."""
        return (self.folder / key).is_file()

    def put(self, key: str, raw: bytes) -> None:
        """Keep ``raw`` under ``key``, then bring the folder under its bound if this
        process's writes may have taken it over."""
        if len(raw) > self.max_bytes:
            return
        path = self.folder / key
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{uuid.uuid4().hex}.part")
        partial.write_bytes(raw)
        os.replace(partial, path)
        self._written += len(raw)
        if self._total is None or self._total + self._written > self.max_bytes:
            self._evict()

    def _evict(self) -> None:
        """Scan the folder; remove its least recently used files (not those still being
        written) while it is over the bound, down to :data:`KEEP_AFTER_EVICTION` of it."""
        files = []
        for root, _, names in os.walk(self.folder):
            for name in names:
                if name.startswith("."):  # a file still being written
                    continue
                try:
                    stat = os.stat(os.path.join(root, name))
                except FileNotFoundError:  # removed by another process meanwhile
                    continue
                files.append((stat.st_mtime, stat.st_size, os.path.join(root, name)))
        total = sum(size for _, size, _ in files)
        if total > self.max_bytes:
            for _, size, path in sorted(files):
                if total <= KEEP_AFTER_EVICTION * self.max_bytes:
                    break
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
                total -= size
        self._total, self._written = total, 0


def node_cache_from_environment(environ=None) -> NodeCache | None:
    """The node cache the environment asks for (:data:`FOLDER_VARIABLE`,
    :data:`BYTES_VARIABLE`), or None; ConfigError naming the variable for a bound that
    is not a size.

    >>> node_cache_from_environment({"DOLB_CHUNK_CACHE": "/tmp/c", "DOLB_CHUNK_CACHE_BYTES": "2GB"}).max_bytes
    2000000000
    >>> node_cache_from_environment({}) is None
    True
    """
    environ = os.environ if environ is None else environ
    folder = environ.get(FOLDER_VARIABLE)
    if not folder:
        return None
    from dask.utils import parse_bytes

    size = environ.get(BYTES_VARIABLE) or DEFAULT_BYTES
    try:
        max_bytes = parse_bytes(size)
    except (ValueError, TypeError):
        max_bytes = -1
    if max_bytes <= 0:
        raise ConfigError(f"{BYTES_VARIABLE}={size!r}: not a size in bytes (such as 20GB)")
    return NodeCache(folder, max_bytes)
