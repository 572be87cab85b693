"""The stream's compiled gather and direct chunk decoding: every order delivers exactly
the rows of a NumPy reference, dense and CSR, across chunk boundaries and partial last
chunks, from a local store and through Zarr (an fsspec URL) alike."""

import numpy as np
import pytest
import scipy.sparse as sp

from dolb.data import ChunkCache, stream_blocks, write_dataset
from dolb.data.store.decoding import ChunkDecoder
from dolb.data.store.gather import OUTSIDE, REPEATED, SORT_BELOW, first_bad_row, spans_in_one_chunk
from dolb.data.store.readers import CHECKED

N = 43  # rows: chunks of 7 rows leave a partial last chunk of 1


def sparse_X(rng) -> sp.csr_matrix:
    """43 x 20 CSR, float32, 0 to 9 non-zeros a row (empty rows included)."""
    counts = rng.integers(0, 10, size=N)
    counts[[0, 5, 42]] = 0
    indices = np.concatenate([np.sort(rng.choice(20, c, replace=False)) for c in counts])
    values = (rng.random(indices.shape[0]) + 0.25).astype(np.float32)
    return sp.csr_matrix((values, indices, np.r_[0, np.cumsum(counts)]), shape=(N, 20))


STORES = {
    "dense float64": lambda rng: (rng.standard_normal((N, 3)), rng.standard_normal(N)),
    "dense float32, 2-D y": lambda rng: (rng.standard_normal((N, 4)).astype(np.float32), rng.random((N, 2))),
    "dense int8, int y": lambda rng: (rng.integers(-3, 3, (N, 2)).astype(np.int8), rng.integers(0, 5, N)),
    "CSR float32": lambda rng: (sparse_X(rng), np.where(rng.random(N) < 0.5, -1.0, 1.0)),
}
ORDERS = {
    "stored": lambda rng: None,
    "permuted": lambda rng: rng.permutation(N),
    "reversed": lambda rng: np.arange(N)[::-1].copy(),
    "subset": lambda rng: rng.choice(N, 17, replace=False),
    "one run": lambda rng: np.arange(6, 30),
}


def dense(X) -> np.ndarray:
    return X.toarray() if sp.issparse(X) else np.asarray(X)


@pytest.fixture(scope="module", params=list(STORES))
def stored(request, tmp_path_factory):
    X, y = STORES[request.param](np.random.default_rng(1))
    folder = tmp_path_factory.mktemp("stores")
    # small chunks: blocks cross chunk boundaries, CSR rows straddle element chunks
    return X, y, write_dataset(folder / "local", X, y, chunk_rows=7), f"file://{folder}/url"


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("block_size", [5, 16, 64])
def test_every_order_gives_exactly_the_reference_rows(stored, order, block_size):
    X, y, ds, _ = stored
    rows = ORDERS[order](np.random.default_rng(2))
    wanted = np.arange(N) if rows is None else rows
    blocks = list(stream_blocks(ds, rows, block_size=block_size, cache=ChunkCache(1 << 20)))
    got_X = np.concatenate([dense(b) for b, _ in blocks]) if blocks else np.empty((0, X.shape[1]))
    got_y = np.concatenate([t for _, t in blocks])
    assert [len(t) for _, t in blocks] == [min(block_size, len(wanted) - a) for a in range(0, len(wanted), block_size)]
    np.testing.assert_array_equal(got_X, dense(X)[wanted].astype(np.float64))
    np.testing.assert_array_equal(got_y, np.asarray(y)[wanted])
    assert got_X.dtype == np.float64 and got_y.dtype == np.asarray(y).dtype
    for block, _ in blocks:
        if sp.issparse(block):  # canonical, int32 indices, flagged as checked
            assert block.has_canonical_format and block.indices.dtype == np.int32
            assert getattr(block, CHECKED) is True


def test_a_store_behind_a_url_reads_through_zarr_and_gives_the_same_rows(stored):
    X, y, ds, url = stored
    remote = write_dataset(url, X, y, chunk_rows=7)
    order = np.random.default_rng(3).permutation(N)
    for name in ds.arrays:
        assert ChunkDecoder(ds.arrays[name], None).local is False
    for (a, ya), (b, yb) in zip(stream_blocks(ds, order, block_size=10), stream_blocks(remote, order, block_size=10)):
        np.testing.assert_array_equal(dense(a), dense(b))
        np.testing.assert_array_equal(ya, yb)


def test_direct_decoding_equals_zarr_chunk_by_chunk(stored):
    _, _, ds, _ = stored
    from pathlib import Path

    for name, array in ds.arrays.items():
        decoder = ChunkDecoder(array, Path(ds.path, *name.split("/")))
        assert decoder.local
        length = array.chunks[0]
        for index in range(-(-array.shape[0] // length)):
            start = index * length
            stop = min(start + length, array.shape[0])
            np.testing.assert_array_equal(decoder.decode(index, stop - start), array[start:stop])


def test_a_sliced_block_is_no_longer_flagged_and_is_checked_again(stored):
    X, _, ds, _ = stored
    if not sp.issparse(X):
        pytest.skip("the flag is on CSR blocks")
    block, _ = next(iter(stream_blocks(ds, block_size=N)))
    assert getattr(block[:3], CHECKED, False) is False


def test_values_and_indices_chunked_differently_are_gathered_apart(tmp_path):
    from dolb.data.store.readers import ChunkReader, RowReader

    X = sparse_X(np.random.default_rng(4))
    seven = write_dataset(tmp_path / "seven", X, np.ones(N), chunk_rows=7)
    eleven = write_dataset(tmp_path / "eleven", X, np.ones(N), chunk_rows=11)
    reader = RowReader(seven)
    reader.readers["X/indices"] = ChunkReader(eleven, "X/indices")  # same content, other chunks
    assert reader.readers["X/indices"].chunk_length != reader.readers["X/data"].chunk_length
    rows = np.random.default_rng(5).permutation(N)
    np.testing.assert_array_equal(reader.read(rows)[0].toarray(), X.toarray()[rows])


def bad_row_reference(rows, n_rows):
    """The first row outside [0, n_rows) or repeated, in a plain loop: (row, why)."""
    seen = set()
    for row in rows.tolist():
        if not 0 <= row < n_rows:
            return row, OUTSIDE
        if row in seen:
            return row, REPEATED
        seen.add(row)
    return -1, 0


@pytest.mark.parametrize("n_rows", [1000, 40])  # a few rows of many (sorted), or marks
def test_the_first_bad_row_is_found_as_a_plain_loop_finds_it(n_rows):
    rng = np.random.default_rng(n_rows)
    for _ in range(200):
        rows = rng.permutation(n_rows)[: rng.integers(1, 50)]
        spoil = rng.integers(0, 4)
        if spoil == 1:  # a row asked for twice
            rows = np.insert(rows, rng.integers(0, rows.shape[0] + 1), rng.choice(rows))
        elif spoil == 2:  # a row outside
            rows[rng.integers(0, rows.shape[0])] = rng.choice([-1, n_rows, n_rows + 7, -(2**40)])
        found = first_bad_row(rows.astype(np.int64), n_rows)
        expected = bad_row_reference(rows, n_rows)
        if rows.shape[0] * SORT_BELOW < n_rows and expected[1] == REPEATED:
            # sorted: the smallest repeated row, not the first seen; the same when one repeats
            expected = (int(min(r for r in rows.tolist() if (rows == r).sum() > 1)), REPEATED)
        assert tuple(map(int, found)) == expected, rows


def test_rows_in_one_chunk_are_found_with_their_offsets():
    """Row pointers of 12 rows over chunks of 10 values: rows 3 and 9 are empty (they
    lie in any chunk), row 4 (values 9 and 10) crosses from chunk 0 into chunk 1."""
    counts = np.array([3, 2, 4, 0, 2, 4, 2, 3, 3, 0, 6, 1])
    indptr = np.r_[0, np.cumsum(counts)].astype(np.int64)  # values 0..29
    for rows, chunk in (([1, 0, 2], 0), ([6, 5], 1), ([3, 6, 5], 1), ([8, 9, 10], 2), ([7, 3], 1),
                        ([3, 9], -1), ([0, 5], -1), ([4], -1), ([5, 4], -1)):
        rows = np.array(rows, np.int64)
        begins, ends = np.empty_like(rows), np.empty_like(rows)
        found, nnz = spans_in_one_chunk(indptr, rows, 10, begins, ends)
        assert (found, nnz) == (chunk, counts[rows].sum()), rows
        if chunk >= 0:
            np.testing.assert_array_equal(begins, indptr[rows] - 10 * chunk)
            np.testing.assert_array_equal(ends - begins, counts[rows])
