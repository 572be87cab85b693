"""Decoding one chunk of a stored array, its codec pipeline read once.

Every dolb array is encoded little-endian bytes -> [Blosc] -> CRC32C (see
:mod:`dolb.data.store.format`). For an array of a local store with exactly that
pipeline, :class:`ChunkDecoder` reads the chunk's file, checks its CRC32C trailer and
decompresses it itself: the same codecs (numcodecs' Blosc, the CRC32C Zarr checks),
without the per-call machinery of a Zarr read (an event loop round trip, selection
objects, a buffer prototype), which costs more than decoding a chunk of a few MB.
The bytes of a chunk of a store behind a URL, fetched by
:mod:`dolb.data.store.remote`, are decoded the same way (:meth:`ChunkDecoder.decode_bytes`).
Anything else (an edited or unknown pipeline) is read through Zarr.

A chunk file that does not exist decodes, as in Zarr, to the array's fill value: the
chunk manifest check that follows every decode is what refuses it.

Examples
--------
>>> ds = open_dataset(tmp / "toy")
>>> decoder = ChunkDecoder(ds.arrays["y"], Path(ds.path) / "y")
>>> decoder.local, decoder.decode(0, 3)
(True, array([0., 1., 2.]))
"""

from __future__ import annotations

from pathlib import Path

import crc32c
import numcodecs
import numpy as np
import zarr
from zarr.codecs import BloscCodec, BytesCodec, Crc32cCodec

from dolb.data.store.format import little


class ChunkDecoder:
    """Decodes chunks of one array along axis 0.

    Parameters
    ----------
    array : zarr.Array
        The array.
    folder : Path or None
        The array's folder in a local store (None: read through Zarr).
    """

    def __init__(self, array: zarr.Array, folder: Path | None) -> None:
        self.array = array
        self.dtype = array.dtype
        self.chunk_shape = tuple(int(c) for c in array.chunks)
        self.shape = tuple(int(n) for n in array.shape)
        self.blosc = None
        self.plain = self._plain_pipeline(array.metadata.codecs)
        self.local = folder is not None and self.plain
        self.folder = folder

    def _plain_pipeline(self, codecs) -> bool:
        """Whether ``codecs`` is dolb's own pipeline (remembering its Blosc, if any)."""
        if len(codecs) not in (2, 3) or not isinstance(codecs[-1], Crc32cCodec):
            return False
        serializer = codecs[0]
        if not isinstance(serializer, BytesCodec) or (
            self.dtype.itemsize > 1 and serializer.endian is not None and serializer.endian.value != "little"
        ):
            return False
        if self.dtype != little(self.dtype) and self.dtype.itemsize > 1:
            return False
        if len(codecs) == 3:
            if not isinstance(codecs[1], BloscCodec):
                return False
            self.blosc = numcodecs.Blosc()  # Blosc's frame header says how it was compressed
        return True

    def key(self, index: int) -> str:
        """The store key of chunk ``index`` (relative to the array's folder)."""
        return self.array.metadata.encode_chunk_key((index,) + (0,) * (self.array.ndim - 1))

    def decode(self, index: int, length: int) -> np.ndarray:
        """The first ``length`` rows of chunk ``index`` (a new array).

        Raises
        ------
        ValueError, OSError, zarr.errors.BaseZarrError
            The chunk cannot be read or decoded, or its CRC32C does not match.
        """
        start = index * self.chunk_shape[0]
        if not self.local:
            return self.array[start : start + length]
        try:
            raw = (self.folder / self.key(index)).read_bytes()
        except FileNotFoundError:
            raw = None
        return self.decode_bytes(raw, length)

    def decode_bytes(self, raw: bytes | None, length: int, checked: bool = False) -> np.ndarray:
        """The first ``length`` rows of the chunk stored as ``raw`` (the bytes of its file
        or object; None for a chunk that does not exist, which decodes to the fill value),
        for an array of dolb's own pipeline (``plain``); ``checked``: its CRC32C trailer
        was checked already (by the node chunk cache that served it).

        Raises
        ------
        ValueError
            The CRC32C does not match, or the bytes do not decode to a chunk.
        """
        if raw is None:
            return np.full((length, *self.chunk_shape[1:]), self.array.fill_value, dtype=self.dtype)
        values = decode_chunk_file(raw, self.blosc, self.dtype, int(np.prod(self.chunk_shape)), checked)
        return values.reshape(self.chunk_shape)[:length]


def decode_chunk_file(
    raw: bytes, blosc: numcodecs.Blosc | None, dtype: np.dtype, size: int, checked: bool = False
) -> np.ndarray:
    """The ``size`` values of ``dtype`` in the bytes ``raw`` of a chunk file of dolb's
    pipeline: its CRC32C trailer checked (unless ``checked`` says it was already), then
    Blosc-decompressed (unless ``blosc`` is None). The reader decodes every chunk
    through this, and the writer measures the codec candidates through it
    (:mod:`dolb.data.store.layout`).

    Raises
    ------
    ValueError
        The CRC32C does not match, or the chunk does not decode to ``size`` values.

    Examples
    --------
    >>> body = np.arange(3.0).tobytes()
    >>> decode_chunk_file(body + crc32c.crc32c(body).to_bytes(4, "little"), None, np.dtype("<f8"), 3)
    array([0., 1., 2.])
    """
    body = memoryview(raw)[:-4]
    if len(raw) < 4 or not checked and crc32c.crc32c(body) != int.from_bytes(raw[-4:], "little"):
        raise ValueError("its CRC32C checksum does not match its bytes")
    decoded = blosc.decode(body) if blosc is not None else body
    values = np.frombuffer(decoded, dtype=dtype)
    if values.shape[0] != size:
        raise ValueError(f"it decodes to {values.shape[0]} values, not {size}")
    return values
