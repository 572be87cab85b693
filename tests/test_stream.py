"""The block stream: exact rows in exact order, background thread life cycle, memory."""

import textwrap
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from dolb.data import open_dataset, stream_blocks, write_dataset
from dolb.data import stream as stream_module
from dolb.data.splits import DEFAULT_WINDOW, ORDER_CHUNK_ROWS, split_rows, windowed_order
from dolb.data.store.decoding import ChunkDecoder
from dolb.errors import ConfigError, DataError
from dolb.evaluation.run_cell import run_cell
from dolb.execution.sweep import plan_groups
from dolb.experiment.pipeline import load_pipeline
from dolb.learners import learner_class
from dolb.seeding import seed_for


@pytest.fixture(params=["dense", "sparse"])
def stored(request, tmp_path):
    """(dataset, X as a dense array, y) with 103 rows in chunks of 7."""
    rng = np.random.default_rng(0)
    if request.param == "dense":
        X = rng.standard_normal((103, 5)).astype(np.float32)
        full = X.astype(np.float64)
    else:
        X = sp.random(103, 40, density=0.1, format="csr", rng=rng)
        full = X.toarray()
    y = np.arange(103.0) + 0.5
    return write_dataset(tmp_path / request.param, X, y, chunk_rows=7), full, y


def collect(blocks, block_size):
    """Concatenate blocks into (dense X, y), checking block types and sizes."""
    Xs, ys = [], []
    for X, y in blocks:
        assert 1 <= y.shape[0] <= block_size and X.shape[0] == y.shape[0]
        if sp.issparse(X):
            assert isinstance(X, sp.csr_matrix) and X.dtype == np.float64
            X = X.toarray()
        else:
            assert X.dtype == np.float64 and X.flags.c_contiguous
        Xs.append(X)
        ys.append(y)
    return np.concatenate(Xs), np.concatenate(ys)


@pytest.mark.parametrize("block_size", [1, 10, 64, 4096])
def test_stored_order_gives_every_row(stored, block_size):
    ds, full, y = stored
    X, labels = collect(stream_blocks(ds, block_size=block_size), block_size)
    np.testing.assert_array_equal(X, full)
    np.testing.assert_array_equal(labels, y)


@pytest.mark.parametrize("block_size", [9, 50])
def test_seeded_permutation_of_a_subset_gives_exactly_those_rows(stored, block_size):
    ds, full, y = stored
    rows = np.random.default_rng(42).permutation(ds.n_rows)[:77]
    X, labels = collect(stream_blocks(ds, rows, block_size=block_size), block_size)
    np.testing.assert_array_equal(X, full[rows])
    np.testing.assert_array_equal(labels, y[rows])


def test_no_rows_gives_no_blocks(stored):
    ds, _, _ = stored
    assert list(stream_blocks(ds, [])) == []


def test_bad_arguments_fail_at_the_call(stored):
    ds, _, _ = stored
    for kwargs in ({"block_size": 0}, {"prefetch": -1}, {"block_size": 2.0}, {"prefetch": True}):
        with pytest.raises(ConfigError, match=next(iter(kwargs))):
            stream_blocks(ds, **kwargs)
    with pytest.raises(ConfigError, match="row 3 is asked for twice"):
        stream_blocks(ds, [1, 3, 2, 3])  # a few rows of many: found by sorting them
    with pytest.raises(ConfigError, match="row 5 is asked for twice"):
        stream_blocks(ds, np.r_[np.arange(50, 103), np.arange(50), 5])  # found by marking rows


def stream_threads():
    return [t for t in threading.enumerate() if t.name == "dolb-stream"]


def test_a_local_store_is_read_in_the_calling_thread(stored, monkeypatch):
    """By default a local store is read when a block is asked for, in the calling thread
    (no reading thread); a store behind a URL, and any stream given prefetch > 0, is read
    ahead by a thread. The blocks are the same either way."""
    ds, _, _ = stored
    readers = []
    original = stream_module.RowReader.read

    def noted(self, rows, in_place=False):
        readers.append(threading.current_thread().name)
        return original(self, rows, in_place)

    monkeypatch.setattr(stream_module.RowReader, "read", noted)
    order = np.random.default_rng(4).permutation(ds.n_rows)
    local = list(stream_blocks(ds, order, block_size=7))
    assert set(readers) == {threading.current_thread().name} and len(readers) == len(local) > 1
    readers.clear()
    ahead = list(stream_blocks(ds, order, block_size=7, prefetch=2))
    assert "dolb-stream" in readers
    for (X1, y1), (X2, y2) in zip(local, ahead, strict=True):
        np.testing.assert_array_equal(X1.toarray() if hasattr(X1, "toarray") else X1,
                                      X2.toarray() if hasattr(X2, "toarray") else X2)
        np.testing.assert_array_equal(y1, y2)
    monkeypatch.setattr(stream_module, "is_url", lambda path: True)
    readers.clear()
    list(stream_blocks(ds, order, block_size=7))
    assert "dolb-stream" in readers


def test_early_break_stops_the_thread(stored):
    ds, _, _ = stored
    list(stream_blocks(ds))  # let Zarr start its own (lasting) worker threads first
    before = threading.active_count()
    for _ in stream_blocks(ds, block_size=5, prefetch=1):
        assert len(stream_threads()) == 1
        break
    assert stream_threads() == [] and threading.active_count() == before
    blocks = stream_blocks(ds, np.arange(103)[::-1], block_size=3)
    next(blocks)
    blocks.close()
    assert stream_threads() == [] and threading.active_count() == before


def test_reading_stays_at_most_prefetch_blocks_ahead(stored, monkeypatch):
    ds, _, _ = stored
    reads = []
    original = stream_module.RowReader.read

    def counted(self, rows, in_place=False):
        reads.append(rows)
        return original(self, rows, in_place)

    monkeypatch.setattr(stream_module.RowReader, "read", counted)
    blocks = stream_blocks(ds, block_size=2, prefetch=3)
    next(blocks)
    deadline = time.monotonic() + 5
    while len(reads) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    # one consumed, three queued, one read and waiting for room
    assert len(reads) == 5
    blocks.close()


def test_corrupted_chunk_raises_in_the_consumer_after_good_blocks(tmp_path):
    X = np.random.default_rng(1).standard_normal((60, 30))
    ds = write_dataset(tmp_path / "d", X, np.zeros(60), chunk_rows=10)
    chunk = Path(ds.path) / "X" / "c" / "3" / "0"
    raw = bytearray(chunk.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    chunk.write_bytes(bytes(raw))
    seen = []
    with pytest.raises(DataError, match="'X' chunk 3"):
        for block, _ in stream_blocks(ds, block_size=10):
            seen.append(block)
    assert len(seen) == 3
    np.testing.assert_array_equal(np.concatenate(seen), X[:30])
    assert stream_threads() == []


@pytest.mark.parametrize("order", ["stored", "permuted"])
def test_memory_stays_a_few_blocks(tmp_path, order):
    n, d = 40_000, 64  # 20 MB of float64
    X = np.random.default_rng(2).standard_normal((n, d))
    ds = write_dataset(tmp_path / "big", X, np.zeros(n), chunk_rows=1000)
    rows = None if order == "stored" else np.random.default_rng(3).permutation(n)[: n // 4]
    del X
    warm = None if rows is None else rows[:10]  # Numba loads (or compiles) the readers' kernels first: not the stream's
    sum(y.shape[0] for _, y in stream_blocks(ds, warm, block_size=1000, prefetch=2))
    tracemalloc.start()
    try:
        total = sum(y.shape[0] for _, y in stream_blocks(ds, rows, block_size=1000, prefetch=2))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert total == (n if rows is None else n // 4)
    dataset_bytes = n * d * 8
    assert peak < dataset_bytes / 4, f"peak {peak / 1e6:.1f} MB, dataset {dataset_bytes / 1e6:.0f} MB"


def test_shared_chunk_cache_decodes_each_chunk_once_within_budget(tmp_path):
    from dolb.data import ChunkCache

    X = np.arange(400, dtype=np.float64).reshape(200, 2)
    ds = write_dataset(tmp_path / "cached", X, np.arange(200.0), chunk_rows=50)
    cache = ChunkCache(max_bytes=10_000)
    first = [x for x, _ in stream_blocks(ds, rows=np.arange(10, 20), cache=cache)]
    assert cache.bytes == 50 * 2 * 8 + 50 * 8  # one X chunk and one y chunk
    import zarr

    stored = zarr.open_array(str(tmp_path / "cached" / "X"), mode="r+")
    stored[0:50] = -1.0  # change it behind the cache
    again = [x for x, _ in stream_blocks(ds, rows=np.arange(10, 20), cache=cache)]
    assert np.array_equal(first[0], again[0]) and again[0][0, 0] == 20.0  # served from the cache
    with pytest.raises(DataError, match="'X' chunk 0 .* does not match the chunk manifest"):
        list(stream_blocks(ds, rows=np.arange(10, 20)))  # read again, the change is seen
    stored[0:50] = X[:50]
    small = ChunkCache(max_bytes=500)
    list(stream_blocks(ds, cache=small, block_size=64))
    assert small.bytes <= 500


# --------------------------------------------------------------------------- the windowed order


def test_windowed_order_is_a_seeded_two_level_shuffle():
    rows = np.sort(np.random.default_rng(0).choice(1000, 95, replace=False))  # a holdout's training rows
    order = windowed_order(rows, 3, np.random.default_rng(7), chunk_rows=10)
    assert sorted(order.tolist()) == rows.tolist()  # every row once
    assert np.array_equal(order, windowed_order(rows, 3, np.random.default_rng(7), chunk_rows=10))
    assert not np.array_equal(order, windowed_order(rows, 3, np.random.default_rng(8), chunk_rows=10))
    chunk = np.searchsorted(rows, order) // 10  # the chunk (10 consecutive training rows) of each row
    windows = [chunk[a : a + 30] for a in range(0, 95, 30)]  # 3 windows of 3 chunks, then the rest
    named = [list(dict.fromkeys(np.sort(w).tolist())) for w in windows]
    assert [len(n) for n in named] == [3, 3, 3, 1]
    assert sorted(sum(named, [])) == list(range(10))  # each chunk whole in one window
    assert named != [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]  # chunks moved
    assert not all(np.all(np.diff(w) >= 0) for w in windows)  # rows shuffled within windows
    assert sorted(windowed_order(rows, 10, np.random.default_rng(7), chunk_rows=10).tolist()) == rows.tolist()


@pytest.mark.parametrize("bad", [0, -2, 1.5, True])
def test_windowed_order_refuses_a_bad_window(bad):
    with pytest.raises(ConfigError, match=f"^windowed order: window must be a positive integer, got {bad!r}$"):
        windowed_order(np.arange(10), bad, np.random.default_rng(0))


def test_windowed_split_orders_the_same_rows_and_leaves_the_others_unchanged():
    def split(scheme, order, n=20_000, **options):
        return split_rows(scheme, 0, n, np.random.SeedSequence(3), order=order, **options)

    random, test = split("holdout", "random")
    windowed, same_test = split("holdout", "windowed", window=2)
    assert np.array_equal(test, same_test) and np.array_equal(np.sort(windowed), np.sort(random))
    chunk = np.searchsorted(np.sort(windowed), windowed) // ORDER_CHUNK_ROWS  # 4 chunks of 4096 training rows
    for c in range(4):  # the rows of a chunk are less than 2 chunks apart
        places = np.flatnonzero(chunk == c)
        assert places[-1] - places[0] < 2 * ORDER_CHUNK_ROWS
    n = 5 * ORDER_CHUNK_ROWS
    given, _ = split("given", "windowed", n)  # the default window: 4 chunks, then the last one alone
    assert sorted(given.tolist()) == list(range(n))
    assert len(set((given[: DEFAULT_WINDOW * ORDER_CHUNK_ROWS] // ORDER_CHUNK_ROWS).tolist())) == DEFAULT_WINDOW
    assert np.array_equal(split("given", "windowed", n, window=DEFAULT_WINDOW)[0], given)


def test_a_windowed_order_decodes_far_fewer_chunks_than_a_permutation(tmp_path, monkeypatch):
    ds = write_dataset(tmp_path / "d", np.random.default_rng(0).standard_normal((4000, 10)), np.zeros(4000),
                       chunk_rows=100)
    decoded = []
    original = ChunkDecoder.decode
    monkeypatch.setattr(ChunkDecoder, "decode", lambda self, i, n: decoded.append(i) or original(self, i, n))

    def decodes(rows):
        decoded.clear()
        blocks = list(stream_blocks(ds, rows, block_size=200))  # no shared cache: 2 chunks kept per array
        assert np.array_equal(np.concatenate([y for _, y in blocks]).shape, (4000,))
        return len(decoded)

    permuted = decodes(np.random.default_rng(1).permutation(4000))
    windowed = decodes(windowed_order(np.arange(4000), 2, np.random.default_rng(1), chunk_rows=100))
    assert decodes(None) == 2 * 40  # X and y, each chunk once
    assert windowed == 2 * 40 and permuted > 10 * windowed


def test_a_windowed_cell_learns_its_order_and_the_other_orders_keep_their_cell_ids(tmp_path):
    text = textwrap.dedent("""
        [pipeline]
        name = "orders"
        seed = 2

        [datasets.text]
        generator = "sparse_text"
        params = {{ n_rows = 9000, n_features = 300, n_test = 500 }}

        [experiments.e]
        dataset = "text"
        task = "binary"
        split = {{ scheme = "given", count = 1, order = "{order}"{window} }}
        checkpoints = [9000]
        metrics = ["test_error"]
        learners = [{{ learner = "perceptron" }}]
    """)
    cells = {}
    for order, window in (("stored", ""), ("random", ""), ("windowed", ", window = 2")):
        path = tmp_path / f"{order}.toml"
        path.write_text(text.format(order=order, window=window))
        (group,) = plan_groups(load_pipeline(path))
        cells[order] = group.cell(0)
    assert cells["windowed"].spec.split.window == 2
    assert "window" not in cells["stored"].spec.split.canonical() and "window" not in cells["random"].spec.split.canonical()
    result = run_cell(cells["windowed"])
    # the same by hand: the split's windowed order, the Perceptron on those rows
    train, test = open_dataset(cells["windowed"].train_path), open_dataset(cells["windowed"].test_path)
    X, y = train.read(np.arange(train.n_rows))
    rows, _ = split_rows("given", 0, 9000, seed_for(2, "split", "text", 0), order="windowed", window=2)
    assert not np.array_equal(rows, np.arange(9000))
    learner = learner_class("perceptron")(X.shape[1])
    learner.learn(X[rows], y[rows])
    X_test, y_test = test.read(np.arange(test.n_rows))
    assert result["metrics"]["last"]["test_error"][-1] == np.mean(np.where(learner.predict(X_test) > 0, 1, -1) != y_test)
