"""The dolb dataset format: layout, encoding, fingerprint, and where a store lives.

A dataset is a Zarr v3 group on the local file system or behind an fsspec URL::

    <path>/zarr.json     group attributes: {"dolb_dataset": 1, "n_rows", "n_features",
                         "fingerprint", "provenance", "chunk_manifest", "layout"}
    <path>/X             dense features: an (n, d) array chunked by rows, input dtype kept
    <path>/X/data        sparse features: a group with the anndata CSR encoding
    <path>/X/indices        (attributes ``encoding-type: csr_matrix``,
    <path>/X/indptr          ``encoding-version: 0.1.0``, ``shape: [n, d]``)
    <path>/y             targets: (n,) or (n, k), chunked by rows like X, dtype kept

Every array is encoded bytes -> [Blosc (lz4 or zstd, shuffle)] -> crc32c, its codec and
chunk size recorded in the attribute ``layout`` (:mod:`dolb.data.store.layout`). A chunk
that fails its checksum or the chunk manifest (:mod:`dolb.data.store.manifest`) is a
:class:`~dolb.errors.DataError` naming the store, the array and the chunk. The
fingerprint is the sha256 of a canonical description (format version, array names,
dtypes, shapes) followed by the little-endian bytes of every array in a fixed order: it
depends on the content only. Why it is built this way: docs/design/data-store.md.

Examples
--------
>>> start_fingerprint([("X", np.dtype("<f8"), (2, 2)), ("y", np.dtype("<f8"), (2,))]).name
'sha256'
"""

from __future__ import annotations

import hashlib

import fsspec
import numpy as np
import zarr.errors
import zarr.storage

from dolb.data.store.object_stores import chunk_store_options, storage_options
from dolb.errors import ConfigError
from dolb.identity import canonical_json

FORMAT_VERSION = 1
"""Value of the ``dolb_dataset`` attribute: the version of this layout."""
INT32_MAX = np.iinfo(np.int32).max
"""Largest CSR index or pointer kept as int32 (larger ones are int64)."""
READ_ERRORS = (ValueError, RuntimeError, OSError, zarr.errors.BaseZarrError)
"""What Zarr raises on a missing, corrupted or undecodable member or chunk."""


def little(dtype: np.dtype) -> np.dtype:
    """``dtype`` in little-endian byte order, the order dolb stores and hashes.

    Examples
    --------
    >>> little(np.dtype(">i4")).str
    '<i4'
    """
    return dtype.newbyteorder("<")


def start_fingerprint(arrays: list[tuple[str, np.dtype, tuple[int, ...]]]):
    """A sha256 object fed the canonical description of ``arrays`` (name, dtype, shape),
    ready to be fed the little-endian bytes of each array in the same order."""
    description = {
        "dolb_dataset": FORMAT_VERSION,
        "arrays": [
            [name, np.dtype(dtype).name, [int(s) for s in shape]]
            for name, dtype, shape in arrays
        ],
    }
    digest = hashlib.sha256(canonical_json(description, compact=False).encode())
    digest.update(b"\0")
    return digest


def is_url(path) -> bool:
    """Whether ``path`` is an fsspec URL (``scheme://...``) rather than a local path.

    Examples
    --------
    >>> is_url("s3://bucket/store"), is_url("data/store")
    (True, False)
    """
    return isinstance(path, str) and "://" in path


def url_filesystem(url: str) -> tuple[fsspec.AbstractFileSystem, str]:
    """fsspec's file system for ``url`` (with dolb's options for its protocol:
    :func:`~dolb.data.store.object_stores.storage_options`) and the path in it; ConfigError naming the URL
    when no file system knows its protocol or the package that serves it is missing
    (fsspec's message says which to install). It lists a folder afresh every time:
    other processes write there (workers, other runs), and a listing remembered would
    hide their files (s3fs's cache of listings never expires by itself).

    Examples
    --------
    >>> url_filesystem("nosuch://bucket/x")
    Traceback (most recent call last):
    dolb.errors.ConfigError: nosuch://bucket/x: not a location dolb can open (Protocol not known: nosuch)
    """
    try:
        return fsspec.core.url_to_fs(url, **({"use_listings_cache": False} | storage_options(url)))
    except ValueError as exc:  # "Protocol not known: ..."
        raise ConfigError(f"{url}: not a location dolb can open ({exc})") from None
    except ImportError as exc:  # "Install s3fs to access S3"
        raise ConfigError(f"{url}: {exc}") from None


def url_store(url: str, read_only: bool) -> zarr.storage.FsspecStore:
    """A Zarr store for an fsspec URL (a local ``file://`` one creates its folders)."""
    url_filesystem(url)  # an unknown protocol or a missing package: one line
    if url.startswith("file://"):
        options = {"auto_mkdir": True}
    else:
        options = chunk_store_options(url) if read_only else storage_options(url)
    return zarr.storage.FsspecStore.from_url(url, read_only=read_only, storage_options=options)
