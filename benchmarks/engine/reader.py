"""``python -m benchmarks reader``: how many rows per second :func:`dolb.data.stream_blocks`
delivers.

Writes a dense store (200,000 x 50) and a sparse store (100,000 x 50,000, about 80
non-zeros per row) of random values into a temporary directory, then streams each in
stored order and in a seeded random permutation, consuming nothing but the blocks, three
full passes each; prints the best and records (``reader``) every pass's rows per second.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from dolb.bench.records import measurement, new_record, write_record
from dolb.data import stream_blocks, write_dataset


def dense_store(directory: Path, n: int, dtype: str = "float64"):
    """A dense dataset of ``n`` rows, 50 features."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 50)).astype(dtype)
    return write_dataset(directory / "dense", X, rng.standard_normal(n))


def sparse_store(directory: Path, n: int, dtype: str = "float64", d: int = 50_000, per_row: int = 80):
    """A CSR dataset of ``n`` rows, ``d`` columns, about ``per_row`` non-zeros a row."""
    rng = np.random.default_rng(1)
    indices = np.sort(rng.integers(0, d, size=(n, per_row)), axis=1).ravel()
    indptr = np.arange(0, n * per_row + 1, per_row)
    values = rng.random(n * per_row).astype(dtype)
    X = sp.csr_matrix((values, indices, indptr), shape=(n, d))
    X.sum_duplicates()
    return write_dataset(directory / "sparse", X, rng.choice([-1.0, 1.0], size=n))


def rows_per_second(ds, rows, block_size: int, repeats: int = 3) -> list[float]:
    """The rate of each of ``repeats`` full passes."""
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        count = sum(y.shape[0] for _, y in stream_blocks(ds, rows, block_size=block_size))
        rates.append(count / (time.perf_counter() - start))
    return rates


def main(args) -> int:
    """``python -m benchmarks reader``: the rates of the module docstring, printed; with
    ``args.record`` a record of every pass."""
    found = []
    with tempfile.TemporaryDirectory() as tmp:
        for make, n in ((dense_store, args.rows_dense), (sparse_store, args.rows_sparse)):
            start = time.perf_counter()
            ds = make(Path(tmp), n, args.dtype)
            print(f"{ds} {args.dtype}: written in {time.perf_counter() - start:.2f} s")
            permutation = np.random.default_rng(2).permutation(ds.n_rows)
            for label, rows in (("stored order", None), ("permuted", permutation)):
                rates = rows_per_second(ds, rows, args.block_size)
                print(f"  {label:<13} {max(rates) / 1e6:8.3f} M rows/s")
                found.append(measurement({"store": "sparse" if make is sparse_store else "dense", "rows": n,
                                          "order": label, "dtype": args.dtype, "block": args.block_size},
                                         "rows/s", rates))
    if args.record:
        print(f"record: {write_record(args.record, new_record('reader', found, command=args.command_line))}")
    return 0
