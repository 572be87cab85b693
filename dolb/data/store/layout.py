"""Each array's codec and chunk size, chosen at write time for read throughput, and
the record of that choice kept in the store.

Candidates: the codecs ``raw`` (no compression), ``lz4`` (Blosc LZ4, level 5, byte
shuffle) and ``zstd`` (Blosc Zstandard, level 1, byte shuffle), and chunks of 256k and
1M elements (clipped to the array; for a dense ``X``, whole rows, and its default chunk
of about 2 MB). An array of at least ``MIN_MEASURED_BYTES`` has a sample of its first
rows encoded with every candidate and decoded back, timed; a candidate replaces the
default (:mod:`dolb.data.store.inputs`' chunk, LZ4 where a sample shrinks at least
``MIN_COMPRESSION``-fold, else raw) only when faster by more than ``GAIN`` (:func:`choose`).
A codec or chunk size given to :func:`~dolb.data.store.writing.write_dataset` is not
measured. The choice depends on the machine, the values stored and the fingerprint do
not. It is recorded in the group attribute ``layout``::

    {"X/data": {"codec": "raw", "chunk_elements": 1048576, "chosen": "measured",
                "candidates": {"raw/256k": 5120.0, "lz4/256k": 2210.5, ...}}, ...}

``chosen`` is ``measured``, ``given`` or ``default`` (an array too small to measure).
How the sample is timed: docs/design/data-store.md.

Examples
--------
>>> choose({"a": 100.0, "b": 115.0}, "a"), choose({"a": 100.0, "b": 125.0}, "a")
('a', 'b')
"""

from __future__ import annotations

import concurrent.futures
import math
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import crc32c
import numcodecs
import numpy as np
from zarr.codecs import BloscCodec

from dolb.data.store.decoding import decode_chunk_file
from dolb.data.store.inputs import Part

LAYOUT_KEY = "layout"
"""Group attribute recording each array's codec and chunk size and how they were chosen."""
CODECS = {
    "raw": None,
    "lz4": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE),
    "zstd": numcodecs.Blosc(cname="zstd", clevel=1, shuffle=numcodecs.Blosc.SHUFFLE),
}
"""The codecs a store may use, by name (None: raw)."""
CHUNK_CANDIDATES = (1 << 18, 1 << 20)
"""Chunk sizes tried, in elements (why not larger: docs/design/data-store.md)."""
GAIN = 1.2
"""A candidate replaces the default only if it reads more than this many times faster."""
MIN_COMPRESSION = 1.5
"""The default codec is LZ4 when a sample shrinks at least this much under it, else raw."""
MIN_MEASURED_BYTES = 1 << 20
"""Smaller arrays keep the default: their layout costs nothing measurable."""
SAMPLE_ELEMENTS = 1 << 21
"""Most elements of an array encoded and decoded per candidate."""
REPEATS = 5
"""Timed decodes of each candidate, after one untimed; the fastest counts."""
_SAMPLE_BYTES = 4 << 20  # sample of the default codec's compression test


@dataclass
class Choice:
    """The codec and chunk length (along axis 0) of one array, how they were chosen,
    and the measured rate of each candidate (MB/s, by ``codec/chunk elements``)."""

    codec: str
    chunk: int
    chosen: str
    candidates: dict[str, float] = field(default_factory=dict)

    def record(self, width: int) -> dict:
        """The entry of the ``layout`` attribute (``width``: elements of a row)."""
        return {
            "codec": self.codec,
            "chunk_elements": self.chunk * width,
            "chosen": self.chosen,
            "candidates": {k: round(v, 1) for k, v in self.candidates.items()},
        }


def zarr_compressors(codec: str) -> tuple:
    """The Zarr codecs (before the CRC32C) of ``codec``."""
    blosc = CODECS[codec]
    if blosc is None:
        return ()
    return (BloscCodec(cname=blosc.cname, clevel=blosc.clevel, shuffle="shuffle"),)


def choose(rates: dict, default):
    """The candidate of highest rate if it beats ``default``'s rate by more than
    ``GAIN``-fold, else ``default``; among equal rates the first listed wins.

    Examples
    --------
    >>> choose({"raw": 900.0, "lz4": 1000.0}, "lz4"), choose({"raw": 1300.0, "lz4": 1000.0}, "lz4")
    ('lz4', 'raw')
    """
    best = max(rates, key=lambda k: rates[k])  # max keeps the first of equal rates
    return best if rates[best] > GAIN * rates[default] else default


def plan_layout(parts: list[Part], codec: str | None, sized: bool, folder: Path | None = None,
                remote: bool = False) -> dict[str, Choice]:
    """The codec and chunk length of every part (the parts' ``chunk`` set to it).

    ``codec``: the codec given for every array (None: chosen per array); ``sized``: the
    chunk lengths of ``parts`` were given (else chosen for the arrays that may change);
    ``folder``: where the candidates' files are written, in a temporary folder removed
    after (default: the system's temporary folder); ``remote``: the store is on an
    object store, where every chunk is a request (a round trip of milliseconds to tens
    of them, and a few hundred requests a second from one client): the arrays that may
    change take the largest candidate chunk, not measured (:func:`_lengths`), and only
    their codec is measured.
    """
    by_name = {part.name: part for part in parts}
    groups = [["X/data", "X/indices"], ["X/indptr"], ["y"]] if "X/data" in by_name else [["X", "y"]]
    choices = {}
    for names in groups:
        members = [by_name[name] for name in names]
        leader = members[0]
        lengths = [leader.chunk] if sized or leader.name in ("X/indptr", "y") else _lengths(leader, remote)
        measures = {part.name: _Measure(part, codec, lengths, folder) for part in members}
        length = lengths[0] if len(lengths) == 1 else _choose_length(list(measures.values()), leader.chunk)
        for part in members:
            part.chunk = length
            choices[part.name] = measures[part.name].choice(length, codec)
    return choices


def _lengths(part: Part, remote: bool = False) -> list[int]:
    """Candidate chunk lengths of ``part`` along axis 0, its default first; on an object
    store (``remote``), the largest candidate alone."""
    width = _width(part)
    found = [max(1, min(part.values.shape[0], c // width)) for c in CHUNK_CANDIDATES]
    return found[-1:] if remote else list(dict.fromkeys([part.chunk, *found]))


def _width(part: Part) -> int:
    return math.prod(part.values.shape[1:])


def _choose_length(measures: list[_Measure], default: int) -> int:
    """The chunk length of arrays chunked alike: by the summed time of those measured,
    each with its own best codec at that length (the default if none was measured)."""
    measured = [m for m in measures if m.rates]
    if not measured:
        return default
    seconds = {
        length: sum(m.sample_bytes / (m.rates[(m.best_codec(length), length)] * 1e6) for m in measured)
        for length in measured[0].lengths
    }
    total = sum(m.sample_bytes for m in measured)
    return choose({length: total / s for length, s in seconds.items()}, default)


class _Measure:
    """The rates of one array's candidates (none when it is too small to measure)."""

    def __init__(self, part: Part, codec: str | None, lengths: list[int], folder: Path | None) -> None:
        self.part = part
        self.folder = folder
        self.lengths = lengths
        self.default_codec = codec or ("lz4" if _compresses(part) else "raw")
        self.codecs = [codec] if codec else list(CODECS)
        self.rates: dict[tuple[str, int], float] = {}
        self.sample_bytes = 0
        if part.values.shape[0] * _width(part) * part.dtype.itemsize >= MIN_MEASURED_BYTES and (
            len(self.codecs) > 1 or len(lengths) > 1
        ):
            self._measure()

    def best_codec(self, length: int) -> str:
        return choose({c: self.rates[(c, length)] for c in self.codecs}, self.default_codec)

    def choice(self, length: int, codec: str | None) -> Choice:
        """The choice at chunk ``length``: measured if anything was, else the codec given
        or the default."""
        if not self.rates:
            return Choice(self.default_codec, length, "given" if codec else "default")
        width = _width(self.part)
        candidates = {f"{c}/{_count(n * width)}": rate for (c, n), rate in self.rates.items()}
        return Choice(self.best_codec(length), length, "measured", candidates)

    def _measure(self) -> None:
        """Time every candidate (how: docs/design/data-store.md)."""
        part = self.part
        rows = max(1, min(part.values.shape[0], max(self.lengths), SAMPLE_ELEMENTS // _width(part)))
        sample = np.ascontiguousarray(part.values[:rows], dtype=part.dtype)
        self.sample_bytes = sample.nbytes
        keys = [(c, length) for length in self.lengths for c in self.codecs]
        with tempfile.TemporaryDirectory(prefix=".dolb-layout-", dir=self.folder) as folder:
            files = {key: _write_chunks(Path(folder), key, sample) for key in keys}
            with concurrent.futures.ThreadPoolExecutor(1) as thread:  # as a stream's reader decodes
                best = thread.submit(_time, files, part.dtype).result()
        self.rates = {key: sample.nbytes / seconds / 1e6 for key, seconds in best.items()}


def _write_chunks(folder: Path, key: tuple[str, int], sample: np.ndarray) -> list[tuple[Path, int]]:
    """``sample`` cut into chunks of ``key``'s length, encoded with its codec, one file
    each (CRC32C trailer included); the files with the element count of each."""
    codec, length = key
    blosc = CODECS[codec]
    found = []
    for i, start in enumerate(range(0, sample.shape[0], length)):
        chunk = sample[start : start + length]
        body = bytes(blosc.encode(chunk)) if blosc is not None else chunk.tobytes()
        path = folder / f"{codec}-{length}-{i}"
        path.write_bytes(body + crc32c.crc32c(body).to_bytes(4, "little"))
        found.append((path, chunk.size))
    return found


def _time(files: dict, dtype: np.dtype) -> dict:
    """Fastest of ``REPEATS`` reads and decodes of each candidate's files, interleaved."""
    blosc = numcodecs.Blosc()  # as the reader: the frame header says how it was compressed
    best = dict.fromkeys(files, math.inf)
    for repeat in range(REPEATS + 1):
        for key, chunks in files.items():
            started = time.perf_counter()
            for path, size in chunks:
                decode_chunk_file(path.read_bytes(), blosc if key[0] != "raw" else None, dtype, size)
            if repeat:  # the first is a warm-up (buffers allocated, files in the page cache)
                best[key] = min(best[key], time.perf_counter() - started)
    return {key: max(seconds, 1e-9) for key, seconds in best.items()}


def _compresses(part: Part) -> bool:
    """Whether a sample of ``part`` shrinks by ``MIN_COMPRESSION`` under LZ4."""
    rows = max(1, _SAMPLE_BYTES // max(1, part.dtype.itemsize * _width(part)))
    sample = np.ascontiguousarray(part.values[:rows], dtype=part.dtype)
    return sample.nbytes >= MIN_COMPRESSION * len(CODECS["lz4"].encode(sample)) if sample.nbytes else True


def layout_line(name: str, record: dict) -> str:
    """One line on how array ``name`` is stored, from its ``layout`` record.

    Examples
    --------
    >>> layout_line("X/data", {"codec": "raw", "chunk_elements": 1 << 20, "chosen": "measured",
    ...                        "candidates": {"raw/1M": 7100.0, "lz4/1M": 2600.0}})
    'X/data: raw, 1M elements a chunk (measured, MB/s: raw/1M 7100, lz4/1M 2600)'
    """
    rates = ", ".join(f"{k} {v:.0f}" for k, v in record.get("candidates", {}).items())
    how = f"{record.get('chosen')}, MB/s: {rates}" if rates else record.get("chosen")
    return f"{name}: {record.get('codec')}, {_count(int(record.get('chunk_elements', 0)))} elements a chunk ({how})"


def _count(n: int) -> str:
    """``n`` elements, short: ``4M``, ``256k`` or the number.

    >>> _count(1 << 20), _count(1 << 18), _count(1000)
    ('1M', '256k', '1000')
    """
    if n % (1 << 20) == 0:
        return f"{n >> 20}M"
    return f"{n >> 10}k" if n % (1 << 10) == 0 else str(n)
