"""One Parquet file of a result folder, written whole or not at all.

A task's part is small (a few cells' rows) and written once per task, so its fixed costs
count: it is encoded in memory and written in one call, uncompressed. Files from
:data:`COMPRESSED_ROWS` rows on (compaction's parts of ~1M rows,
:mod:`dolb.results.compaction`) are compressed with zstd. What each choice saves:
docs/design/store-format.md.

Examples
--------
>>> compression(pa.table({"a": [1.0]})), compression(pa.table({"a": [1.0] * COMPRESSED_ROWS}))
('none', 'zstd')
"""

from __future__ import annotations

import contextlib
import os
import uuid

import pyarrow as pa
import pyarrow.parquet as pq

COMPRESSED_ROWS = 10_000
"""Parquet files of this many rows or more are compressed (zstd)."""


def compression(table: pa.Table) -> str:
    """The Parquet compression of ``table`` (see :data:`COMPRESSED_ROWS`)."""
    return "zstd" if table.num_rows >= COMPRESSED_ROWS else "none"


def write_local(table: pa.Table, path: str) -> None:
    """Write ``table`` as the Parquet file ``path`` (its folder exists) whole or not at
    all: encoded in memory, written to a hidden temporary file beside it, renamed; the
    temporary file removed if anything fails. OSError as the file system raises it."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression=compression(table))
    temporary = f"{os.path.dirname(path)}/.{os.path.basename(path)}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        with open(temporary, "wb") as handle:
            handle.write(sink.getvalue())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
