"""Streaming a dataset from a real S3-protocol server (tests/s3_server.py): chunks fetched
ahead and concurrently, the same values as from local disk in every order, the read-ahead
bounded, and the node chunk cache serving a second reader without a request."""

import numpy as np
import pytest
import scipy.sparse as sp

from dolb.data.splits import windowed_order
from dolb.data.store import ChunkCache, open_dataset, write_dataset
from dolb.data.store.node_cache import NodeCache, node_cache_from_environment
from dolb.data.store.read_ahead import block_chunks, fetched_ahead
from dolb.data.stream import stream_blocks
from dolb.errors import ConfigError
from dolb.evaluation.run_cell import run_cell
from dolb.execution.sweep import plan_groups
from dolb.experiment.pipeline import load_pipeline

ROWS = 600


def sparse_rows(seed: int = 0) -> tuple[sp.csr_matrix, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = sp.random(ROWS, 300, density=0.05, format="csr", random_state=rng, dtype=np.float32)
    y = np.where(rng.random(ROWS) < 0.5, -1.0, 1.0)
    return X, y


def orders() -> dict[str, np.ndarray | None]:
    return {"stored": None, "random": np.random.default_rng(1).permutation(ROWS),
            "windowed": windowed_order(np.arange(ROWS), 2, np.random.default_rng(2), chunk_rows=64)}


def same_blocks(a, b) -> None:
    assert len(a) == len(b)
    for (Xa, ya), (Xb, yb) in zip(a, b, strict=True):
        Xa = Xa.tocsr() if hasattr(Xa, "tocsr") else Xa
        Xb = Xb.tocsr() if hasattr(Xb, "tocsr") else Xb
        if sp.issparse(Xa):
            for part in ("data", "indices", "indptr"):
                assert np.array_equal(getattr(Xa, part), getattr(Xb, part)), part
                assert getattr(Xa, part).dtype == getattr(Xb, part).dtype, part
        else:
            assert np.array_equal(Xa, Xb) and Xa.dtype == Xb.dtype
        assert np.array_equal(ya, yb) and ya.dtype == yb.dtype


@pytest.fixture(scope="module")
def stores(s3_server, tmp_path_factory):
    """The same sparse and dense datasets locally and on the server, in many small chunks
    (written once for the module: the tests only read them)."""
    X, y = sparse_rows()
    dense = np.random.default_rng(3).standard_normal((ROWS, 7))
    bucket, folder = s3_server.bucket(), tmp_path_factory.mktemp("stores")
    return {kind: (write_dataset(folder / kind, X_, y, chunk_rows=100),
                   write_dataset(f"{bucket}/{kind}", X_, y, chunk_rows=100))
            for kind, X_ in (("sparse", X), ("dense", dense))}


@pytest.mark.parametrize("kind", ["sparse", "dense"])
def test_every_order_streams_from_the_server_what_it_streams_from_disk(stores, kind):
    local, remote = stores[kind]
    assert remote.remote is not None and local.remote is None
    for rows in orders().values():
        for in_place in (False, True) if kind == "sparse" else (False,):
            got = list(stream_blocks(remote, rows, block_size=150, in_place=in_place))
            same_blocks(got, list(stream_blocks(local, rows, block_size=150, in_place=in_place)))
    rows = orders()["random"]
    same_blocks(list(stream_blocks(remote, rows, block_size=150, prefetch=0)),  # no reading thread
                list(stream_blocks(local, rows, block_size=150)))
    rows = np.sort(orders()["random"][:50])
    same_blocks([remote.read(rows)], [local.read(rows)])
    assert np.array_equal(remote.labels(), local.labels())


def test_the_read_ahead_holds_at_most_its_bound_and_downloads_each_chunk_once(stores, monkeypatch):
    import s3fs

    _, remote = stores["sparse"]
    rows = orders()["random"]
    blocks = [rows[a : a + 96] for a in range(0, 3 * 96, 96)]
    needs = [key for block in blocks for key in block_chunks(remote, block)]
    assert len(set(needs)) == sum(len(remote.checksums[name]) for name in ("y", "X/data", "X/indices"))
    assert len(needs) == 3 * len(set(needs))  # each random block touches every chunk
    largest = max(len(raw) for raw in remote.remote.fetch(list(set(needs))))
    asked = []
    call = s3fs.S3FileSystem._call_s3

    async def counted(self, method, *args, **kwargs):
        asked.append(method)
        return await call(self, method, *args, **kwargs)

    monkeypatch.setattr(s3fs.S3FileSystem, "_call_s3", counted)
    for ahead in (1, 3):
        before, asked[:] = remote.remote.requests, []
        with fetched_ahead(remote, blocks, ahead=ahead) as reader:
            for number, block in enumerate(blocks):
                reader.read(block)
                reader.prefetcher.done(number)
            prefetcher = reader.prefetcher
            assert 1 <= prefetcher.peak <= ahead
            assert 0 < prefetcher.peak_bytes <= ahead * largest
            assert prefetcher.spill.is_dir()
        assert remote.remote.requests - before == len(set(needs))  # each chunk downloaded once
        assert asked == ["get_object"] * len(set(needs))  # one request a chunk: no HEAD first
        # the later needs read back from disk, or taken from memory when a block before still held the chunk
        assert 0 < prefetcher.spill_reads <= len(needs) - len(set(needs))
        assert not prefetcher.spill.exists()  # removed as the stream ends
    with fetched_ahead(remote, [slice(0, 300), slice(300, 600)]) as reader:
        assert reader.prefetcher.spill is None  # stored order needs no chunk twice: no spill folder


def test_chunks_needed_again_are_read_back_by_the_reader_and_a_lost_spill_file_is_fetched_again(stores, monkeypatch):
    import threading

    from dolb.data.store.read_ahead import ChunkPrefetcher

    local, remote = stores["sparse"]
    rows = orders()["random"]
    blocks = [rows[a : a + 96] for a in range(0, 4 * 96, 96)]
    readers = []
    unspill = ChunkPrefetcher._unspill

    def recorded(self, key, block):
        readers.append(threading.current_thread())
        return unspill(self, key, block)

    monkeypatch.setattr(ChunkPrefetcher, "_unspill", recorded)
    before = remote.remote.requests
    with fetched_ahead(remote, blocks, ahead=2) as reader:
        got = []
        for number, block in enumerate(blocks):
            got.append(reader.read(block))
            reader.prefetcher.done(number)
            if number == 1:  # the spill folder emptied behind the stream's back
                lost = list(reader.prefetcher.spill.iterdir())
                for path in lost:
                    path.unlink()
    # read back where the reader decodes (as a local chunk file), not on the fetching threads
    assert readers and set(readers) == {threading.current_thread()}
    assert lost  # chunks lost are fetched again: once by the reader that missed them, once for the blocks after
    assert remote.remote.requests - before > len({key for block in blocks for key in block_chunks(remote, block)})
    same_blocks(got, [local.read(block) for block in blocks])


def test_a_worker_cache_of_decoded_chunks_is_not_fetched_again(stores):
    _, remote = stores["sparse"]
    cache = ChunkCache(64 << 20)
    first = list(stream_blocks(remote, block_size=96, cache=cache))
    before = remote.remote.requests
    again = list(stream_blocks(remote, block_size=96, cache=cache))
    assert remote.remote.requests == before
    same_blocks(again, first)


def test_the_node_cache_serves_a_second_reader_without_a_request(stores, tmp_path, monkeypatch):
    local, _ = stores["sparse"]
    url = stores["sparse"][1].path
    monkeypatch.setenv("DOLB_CHUNK_CACHE", str(tmp_path / "node"))
    rows = orders()["random"]
    first = open_dataset(url)
    assert first.remote.node_cache is not None
    got = list(stream_blocks(first, rows, block_size=96))
    assert first.remote.requests > 0
    second = open_dataset(url)  # another cell of the node: a process of its own would open it anew
    again = list(stream_blocks(second, rows, block_size=96))
    assert second.remote.requests == 0 and second.remote.node_cache.hits > 0
    want = list(stream_blocks(local, rows, block_size=96))
    same_blocks(got, want)
    same_blocks(again, want)


def test_a_chunk_from_the_node_cache_has_its_crc32c_checked_once(stores, tmp_path, monkeypatch):
    import crc32c

    local, remote = stores["sparse"]
    monkeypatch.setenv("DOLB_CHUNK_CACHE", str(tmp_path / "node"))
    rows = orders()["windowed"]
    list(stream_blocks(open_dataset(remote.path), rows, block_size=96))  # fills the node cache
    cached = open_dataset(remote.path)
    stored = []  # CRC32Cs of stored bytes (the chunk manifest's are of decoded arrays)
    crc = crc32c.crc32c
    monkeypatch.setattr(crc32c, "crc32c", lambda data: stored.extend([] if isinstance(data, np.ndarray) else [1])
                        or crc(data))
    hits = cached.remote.node_cache.hits  # (opening it read the row pointers)
    got = list(stream_blocks(cached, rows, block_size=96))
    assert cached.remote.requests == 0 and cached.remote.node_cache.hits - hits == len(stored) > 0
    same_blocks(got, list(stream_blocks(local, rows, block_size=96)))


def test_a_changed_store_is_not_served_from_the_node_cache(s3_bucket, tmp_path, monkeypatch):
    monkeypatch.setenv("DOLB_CHUNK_CACHE", str(tmp_path / "node"))
    url = f"{s3_bucket}/store"
    X, y = sparse_rows(0)
    old = write_dataset(url, X, y, chunk_rows=40)
    list(stream_blocks(old, block_size=96))
    X2, y2 = sparse_rows(1)  # new content at the same URL: a new fingerprint
    new = write_dataset(url, X2, y2, chunk_rows=40, overwrite=True)
    assert new.fingerprint != old.fingerprint
    reread = open_dataset(url)
    got = list(stream_blocks(reread, block_size=96))
    assert reread.remote.requests > 0
    same_blocks(got, list(stream_blocks(write_dataset(tmp_path / "new", X2, y2, chunk_rows=40), block_size=96)))


def test_the_node_cache_stays_under_its_bound_and_refetches_a_damaged_file(tmp_path):
    cache = NodeCache(tmp_path / "node", max_bytes=10_000)
    for i in range(30):
        body = bytes([i]) * 996
        cache.put(f"fp/a-0/c/{i}", body + crc_trailer(body))
        assert sum(f.stat().st_size for f in (tmp_path / "node").rglob("*") if f.is_file()) <= 10_000
    assert cache.get("fp/a-0/c/29") is not None and cache.get("fp/a-0/c/0") is None  # the oldest went first
    (tmp_path / "node" / "fp/a-0/c/29").write_bytes(b"damaged!")
    assert cache.get("fp/a-0/c/29") is None and not (tmp_path / "node" / "fp/a-0/c/29").exists()


def crc_trailer(body: bytes) -> bytes:
    import crc32c

    return crc32c.crc32c(body).to_bytes(4, "little")


def test_the_node_cache_is_set_by_the_environment():
    assert node_cache_from_environment({"DOLB_CHUNK_CACHE": ""}) is None
    cache = node_cache_from_environment({"DOLB_CHUNK_CACHE": "/tmp/x"})
    assert cache.max_bytes == 10 * 10**9
    with pytest.raises(ConfigError, match="^DOLB_CHUNK_CACHE_BYTES='lots': not a size in bytes"):
        node_cache_from_environment({"DOLB_CHUNK_CACHE": "/tmp/x", "DOLB_CHUNK_CACHE_BYTES": "lots"})


PIPELINE = """
[pipeline]
name = "s3"
seed = 4

[datasets.d]
train = "{train}"

[experiments.e]
dataset = "d"
task = "binary"
split = {{ scheme = "holdout", count = 1, test_fraction = 0.2, order = "{order}" }}
checkpoints = [100, 400]
metrics = ["test_error", "online_loss"]
conversions = ["last", "average"]
learners = [{{ learner = "perceptron" }}]
"""


@pytest.mark.parametrize("order", ["random", "windowed"])
def test_a_cell_learns_the_same_from_the_server_as_from_disk(stores, tmp_path, order):
    results = []
    for store in stores["sparse"]:
        path = tmp_path / f"{len(results)}.toml"
        path.write_text(PIPELINE.format(train=store.path, order=order))
        (group,) = plan_groups(load_pipeline(path))
        results.append(run_cell(group.cell(0)))
    local, remote = results
    assert remote["checkpoints"] == local["checkpoints"] == [100, 400]
    for conversion, metrics in local["metrics"].items():
        for metric, values in metrics.items():
            got = np.asarray(remote["metrics"][conversion][metric])
            assert np.array_equal(got.view(np.int64), np.asarray(values).view(np.int64)), (conversion, metric)
