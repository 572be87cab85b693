"""Measure how many rows per second :func:`dolb.data.stream_blocks` delivers.

Writes a dense store (200,000 x 50) and a sparse store (100,000 x 50,000, about 80
non-zeros per row) of random values into a temporary directory, then streams each in
stored order and in a seeded random permutation, consuming nothing but the blocks.

Usage::

    python scripts/bench_stream.py [--rows-dense N] [--rows-sparse N] [--block-size B]
                                   [--dtype float64|float32]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

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


def rows_per_second(ds, rows, block_size: int, repeats: int = 3) -> float:
    """Best rate over ``repeats`` full passes."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        count = sum(y.shape[0] for _, y in stream_blocks(ds, rows, block_size=block_size))
        best = min(best, time.perf_counter() - start)
    return count / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows-dense", type=int, default=200_000)
    parser.add_argument("--rows-sparse", type=int, default=100_000)
    parser.add_argument("--block-size", type=int, default=4096)
    parser.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for make, n in ((dense_store, args.rows_dense), (sparse_store, args.rows_sparse)):
            start = time.perf_counter()
            ds = make(Path(tmp), n, args.dtype)
            print(f"{ds} {args.dtype}: written in {time.perf_counter() - start:.2f} s")
            permutation = np.random.default_rng(2).permutation(ds.n_rows)
            for label, rows in (("stored order", None), ("permuted", permutation)):
                rate = rows_per_second(ds, rows, args.block_size)
                print(f"  {label:<13} {rate / 1e6:8.3f} M rows/s")


if __name__ == "__main__":
    main()
