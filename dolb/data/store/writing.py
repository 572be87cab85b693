"""Writing datasets: checked, fingerprinted, chunked and checksummed (with a chunk
manifest, see :mod:`dolb.data.store.manifest`), published atomically.

See :mod:`dolb.data.store.format` for the format, :mod:`dolb.data.store.inputs`
for the checks of the input and :mod:`dolb.data.store.layout` for the choice of each
array's codec and chunk size. A local dataset is written into a temporary sibling
directory and renamed into place, so ``path`` holds either nothing, the old dataset
or the complete new one; a crash may leave a ``.<name>.tmp-*`` sibling (or a
``.dolb-layout-*`` folder of the layout measurement) behind, never a half dataset at
``path``. Behind an fsspec URL (an object store cannot rename)
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
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
import zarr
from zarr.codecs import BytesCodec, Crc32cCodec

from dolb.data.store.dataset import Dataset, open_dataset
from dolb.data.store.format import FORMAT_VERSION, is_url, start_fingerprint, url_filesystem, url_store
from dolb.data.store.inputs import Part, input_parts, row_bytes
from dolb.data.store.layout import CODECS, LAYOUT_KEY, Choice, plan_layout, zarr_compressors
from dolb.data.store.manifest import MANIFEST_KEY, chunk_checksum, make_manifest
from dolb.errors import ConfigError, DataError

_SLAB_BYTES = 64 << 20  # input copied, checked, hashed and written this much at a time
_ANNDATA_CSR = {"encoding-type": "csr_matrix", "encoding-version": "0.1.0"}


def _array_options(chunks: tuple[int, ...], codec: str) -> dict[str, Any]:
    """Keyword arguments of ``create_array`` for a dolb array: little-endian bytes,
    ``codec`` (see :mod:`dolb.data.store.layout`), and a CRC32C checksum on every chunk."""
    return {
        "chunks": chunks,
        "serializer": BytesCodec(endian="little"),
        "compressors": (*zarr_compressors(codec), Crc32cCodec()),
        "fill_value": 0,
        "config": {"write_empty_chunks": True},
    }


# --------------------------------------------------------------------------- writing


def write_dataset(
    path: str | os.PathLike,
    X,
    y,
    *,
    chunk_rows: int | None = None,
    codec: str | None = None,
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
        Rows per chunk (default: chosen for read throughput among chunks of 256k and 1M
        elements and about 2 MB, see :mod:`dolb.data.store.layout`; on an object store
        the largest, 1M elements, each chunk being a request; sparse data and indices
        are chunked by elements, ``chunk_rows`` times the mean non-zeros a row).
    codec : {"raw", "lz4", "zstd"}, optional
        Codec of every array (default: chosen per array for read throughput). The choice
        is recorded in the group attribute ``layout``; the values stored, and the content
        fingerprint, do not depend on it.
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
    >>> ds = write_dataset(tmp / "new", np.eye(3), np.arange(3.0))
    >>> ds.n_rows, ds.n_features, ds.sparse
    (3, 3, False)
    """
    if is_url(path):
        return _write_url(str(path), X, y, chunk_rows, codec, provenance, overwrite)
    target = Path(path).absolute()
    provenance = _check_provenance(target, provenance)
    _check_codec(target, codec)
    parts, shape = input_parts(target, X, y, chunk_rows)
    _check_target(target, overwrite)
    temporary = _sibling(target, "tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        layout = plan_layout(parts, codec, sized=chunk_rows is not None, folder=target.parent)
        _write_store(temporary, parts, layout, shape, provenance, sparse=sp.issparse(X))
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


def _check_codec(target, codec: str | None) -> None:
    """ConfigError unless ``codec`` is None or a known codec."""
    if codec is not None and codec not in CODECS:
        raise ConfigError(f"dataset {target}: codec must be one of {', '.join(CODECS)}, got {codec!r}")


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


def _write_url(url: str, X, y, chunk_rows, codec, provenance, overwrite: bool) -> Dataset:
    """:func:`write_dataset` for an fsspec URL: written in place, the attributes that
    make it a dolb dataset last; a failed write is removed."""
    provenance = _check_provenance(url, provenance)
    _check_codec(url, codec)
    parts, shape = input_parts(url, X, y, chunk_rows)
    fs, root = url_filesystem(url)
    if fs.exists(root):
        if not overwrite:
            raise DataError(f"dataset {url} already exists (pass overwrite=True to replace it)")
        try:
            open_dataset(url)
        except DataError:
            raise DataError(f"{url} exists and is not a dolb dataset; refusing to overwrite it") from None
        fs.rm(root, recursive=True)
    try:
        layout = plan_layout(parts, codec, sized=chunk_rows is not None, remote=True)
        _write_store(url_store(url, read_only=False), parts, layout, shape, provenance, sparse=sp.issparse(X))
    except BaseException:
        with contextlib.suppress(OSError):
            fs.rm(root, recursive=True)
        raise
    return open_dataset(url)


def _write_store(
    store, parts: list[Part], layout: dict[str, Choice], shape: tuple[int, int], provenance: dict, *, sparse: bool
) -> None:
    """Write ``parts`` as a dolb Zarr group in ``store`` (a local directory or a Zarr
    store) with the codecs of ``layout``, fingerprint, chunk manifest and layout record
    included; the dolb attributes are written last."""
    root = zarr.create_group(store=str(store) if isinstance(store, Path) else store, zarr_format=3)
    if sparse:
        root.create_group("X", attributes={**_ANNDATA_CSR, "shape": list(shape)})
    digest = start_fingerprint([(p.name, p.dtype, p.values.shape) for p in parts])
    arrays, checksums = {}, {}
    for part in parts:
        arrays[part.name], checksums[part.name] = _write_part(root, part, layout[part.name].codec, digest)
    root.attrs.update(
        {
            "dolb_dataset": FORMAT_VERSION,
            "n_rows": shape[0],
            "n_features": shape[1],
            "fingerprint": digest.hexdigest(),
            "provenance": provenance,
            MANIFEST_KEY: make_manifest(arrays, checksums),
            LAYOUT_KEY: {p.name: layout[p.name].record(math.prod(p.values.shape[1:])) for p in parts},
        }
    )


def _write_part(root: zarr.Group, part: Part, codec: str, digest) -> tuple[zarr.Array, list[int]]:
    """Write one array slab by slab, checking and hashing each slab on the way; return
    the array and the checksum of each of its chunks."""
    shape = part.values.shape
    chunks = (part.chunk, *shape[1:])
    options = _array_options(chunks, codec)
    array = root.create_array(part.name, shape=shape, dtype=part.dtype, **options)
    step = part.chunk * max(1, _SLAB_BYTES // (part.chunk * row_bytes(part.values)))
    checksums = []
    for start in range(0, shape[0], step):  # a slab is a whole number of chunks
        given = part.values[start : start + step]
        part.check(given, start)  # before the cast, which could wrap 64-bit indices
        slab = np.ascontiguousarray(given, dtype=part.dtype)
        digest.update(slab.data)
        checksums += [chunk_checksum(slab[i : i + part.chunk]) for i in range(0, slab.shape[0], part.chunk)]
        array[start : start + slab.shape[0]] = slab
    return array, checksums


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
