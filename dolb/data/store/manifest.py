"""The chunk manifest: what each array of a store must be, chunk by chunk.

Every store carries, in its group attribute ``chunk_manifest``, the metadata each array
was written with (dtype, shape, chunk shape, fill value) and a CRC32C of the decoded
little-endian bytes of each of its chunks, listed by chunk index::

    {"version": 1, "checksum": "crc32c",
     "arrays": {"X": {"dtype": "<f8", "shape": [n, d], "chunks": [c, d],
                      "fill_value": "0.0", "checksums": [crc of chunk 0, crc of chunk 1, ...]},
                "y": {...}}}

Opening a store compares every array's metadata with its record, and every chunk read
is compared with its checksum before it is used: a deleted chunk file, a chunk copied
onto another chunk's key or edited array metadata is a :class:`~dolb.errors.DataError`.
The manifest is not part of the content fingerprint. What it guards against, and why it
lives in the group attributes: docs/design/data-store.md.

Examples
--------
>>> chunk_checksum(np.arange(3.0)) == chunk_checksum(np.arange(3.0).astype(">f8"))
True
"""

from __future__ import annotations

from collections.abc import Mapping

import crc32c
import numpy as np
import zarr

from dolb.data.store.format import little
from dolb.errors import DataError

MANIFEST_VERSION = 1
"""Version of the chunk manifest's layout (attribute ``chunk_manifest``)."""
MANIFEST_KEY = "chunk_manifest"
"""Group attribute holding the manifest."""
_FIELDS = {"dtype": "dtype", "shape": "shape", "chunks": "chunk shape", "fill_value": "fill value"}


def chunk_checksum(values: np.ndarray) -> int:
    """CRC32C of the little-endian bytes of a decoded chunk.

    Examples
    --------
    >>> chunk_checksum(np.array([1, 2], dtype=">u2")) == crc32c.crc32c(bytes([1, 0, 2, 0]))
    True
    """
    return crc32c.crc32c(np.ascontiguousarray(values, dtype=little(values.dtype)))


def array_metadata(array: zarr.Array) -> dict:
    """The recorded metadata of ``array``: dtype, shape, chunk shape, fill value (as text)."""
    return {
        "dtype": array.dtype.str,
        "shape": [int(s) for s in array.shape],
        "chunks": [int(c) for c in array.chunks],
        "fill_value": str(array.fill_value),
    }


def make_manifest(arrays: Mapping[str, zarr.Array], checksums: Mapping[str, list[int]]) -> dict:
    """The manifest of written ``arrays`` with the checksums of their chunks."""
    return {
        "version": MANIFEST_VERSION,
        "checksum": "crc32c",
        "arrays": {
            name: {**array_metadata(array), "checksums": list(checksums[name])}
            for name, array in arrays.items()
        },
    }


def checked_manifest(path: str, attributes: dict, arrays: Mapping[str, zarr.Array]) -> dict[str, list[int]]:
    """The chunk checksums of each array, by name, once every array's metadata is known
    to match its record.

    Raises
    ------
    DataError
        No manifest (not written by this dolb, or damaged), a malformed one, or an array
        whose dtype, shape, chunk shape or fill value differs from its record.
    """
    if MANIFEST_KEY not in attributes:
        raise DataError(
            f"dataset {path}: no chunk manifest (not written by this dolb, or damaged): write it again"
        )
    manifest = attributes[MANIFEST_KEY]
    try:
        version, records = manifest["version"], manifest["arrays"]
        if version != MANIFEST_VERSION or manifest["checksum"] != "crc32c":
            raise ValueError(f"version {version!r} with {manifest['checksum']!r} is not supported")
        if sorted(records) != sorted(arrays):
            raise ValueError(f"it lists arrays {sorted(records)}, the store holds {sorted(arrays)}")
        checksums = {name: [int(c) for c in records[name]["checksums"]] for name in arrays}
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"dataset {path}: chunk manifest is malformed ({exc})") from exc
    for name, array in arrays.items():
        _check_array(path, name, array, records[name], len(checksums[name]))
    return checksums


def _check_array(path: str, name: str, array: zarr.Array, record: dict, n_checksums: int) -> None:
    """DataError naming the first field of ``array``'s metadata that differs from ``record``."""
    found = array_metadata(array)
    for field, label in _FIELDS.items():
        if found[field] != record.get(field):
            raise DataError(
                f"dataset {path}: array {name!r} has {label} {found[field]!r}, but was written "
                f"with {record.get(field)!r} (its zarr.json was edited or replaced)"
            )
    n_chunks = -(-found["shape"][0] // found["chunks"][0])
    if n_checksums != n_chunks:
        raise DataError(
            f"dataset {path}: chunk manifest lists {n_checksums} chunks for array {name!r}, "
            f"which has {n_chunks}"
        )
