"""Datasets and result folders on a real S3-protocol server (tests/s3_server.py)."""

import numpy as np
import pyarrow.parquet as pq
import scipy.sparse as sp

from dolb.data.store import open_dataset, write_dataset
from dolb.execution.lock import remove_uncommitted_parts
from dolb.results.cell_rows import CellRows
from dolb.results.query import incompleteness, stored_cells
from dolb.results.store import ResultStore, result_schema


def test_a_dataset_written_to_the_server_reads_back_the_same(s3_bucket):
    X = np.arange(60, dtype=np.float64).reshape(20, 3)
    y = np.where(np.arange(20) % 2 == 0, 1.0, -1.0)
    write_dataset(f"{s3_bucket}/store", X, y, chunk_rows=8)
    dataset = open_dataset(f"{s3_bucket}/store")
    assert dataset.n_rows == 20
    np.testing.assert_array_equal(dataset.read(np.arange(20))[0], X)


def test_a_dataset_written_to_the_server_takes_the_largest_chunk_each_a_request(s3_bucket):
    """On an object store every chunk is a request: the chunk of the arrays that may
    change is the largest candidate (1M elements, here clipped to the 300,000 there
    are), not measured against 256k as on local disk; the codec is still measured."""
    from dolb.data.store.layout import CODECS

    rng = np.random.default_rng(1)  # 300,000 non-zeros: large enough to measure
    indices = np.sort(np.stack([rng.choice(5000, 100, replace=False) for _ in range(3000)]), axis=1)
    X = sp.csr_matrix((rng.random(300_000) + 0.5, indices.ravel(), np.arange(0, 300_001, 100)), shape=(3000, 5000))
    y = np.where(np.arange(3000) % 3, 1.0, -1.0)
    dataset = write_dataset(f"{s3_bucket}/sparse", X, y)
    for name in ("X/data", "X/indices"):
        record = dataset.layout[name]
        assert record["chunk_elements"] == 300_000 == dataset.arrays[name].chunks[0]
        assert record["chosen"] == "measured" and sorted(record["candidates"]) == sorted(f"{c}/300000" for c in CODECS)
    order = np.random.default_rng(0).permutation(3000)
    np.testing.assert_array_equal(dataset.read(order)[0].toarray(), X[order].toarray())


def cell_rows(*cells: str):
    """A part's table: one failed row for each of ``cells`` (enough to be stored)."""
    rows = CellRows(result_schema({}), run_id="r", worker="w")
    for cell in cells:
        rows.add_failed(cell, {"experiment": "e", "split": 0}, "boom")
    return rows.table()


def test_a_folder_on_the_server_is_listed_afresh(s3_bucket):
    """Parts written by another process (a worker, another run) are seen at once: a
    listing is never remembered."""
    import s3fs

    store = ResultStore(f"{s3_bucket}/out")
    store.write_part(cell_rows("a"))
    assert len(store.present()) == 1 and len(store.list("results")) == 1  # a listing s3fs would remember
    other = s3fs.S3FileSystem(skip_instance_cache=True)  # as another process would write
    pq.write_table(cell_rows("b"), f"{store.results}/part-0-other.parquet", filesystem=other)
    assert len(store.present()) == 2 and len(ResultStore(f"{s3_bucket}/out").present()) == 2


def test_a_run_removes_only_the_uncommitted_parts_whose_cells_are_stored(s3_bucket, tmp_path):
    store = ResultStore(f"{s3_bucket}/out")
    kept = store.write_part(cell_rows("a", "b"))
    store.commit({kept: ["a", "b"]}, "r1")
    copy = store.write_part(cell_rows("a"))  # a killed run's, or another run's whose cells r1 stored too
    pending = store.write_part(cell_rows("c"))  # another run's, not committed yet
    assert remove_uncommitted_parts(store) == [f"{store.results}/{copy}"]
    assert store.present() == {kept, pending}
    store.commit({copy: ["a"], pending: ["c"]}, "r2")  # the other run commits them afterwards
    assert incompleteness(store) == ""  # a part gone whose cells are stored elsewhere
    assert stored_cells(store) == (set(), {"a", "b", "c"})
    local = ResultStore(tmp_path)
    local.write_part(cell_rows("a"))
    assert remove_uncommitted_parts(local) == [] and len(local.present()) == 1  # read there, never computed again


def test_forgetting_the_s3_file_systems_closes_their_sessions(s3_bucket, caplog):
    """s3fs's ``clear_instance_cache`` leaves the sessions to the garbage collector, which
    logs ``Unclosed client session``; dolb's ``forget_s3_filesystems`` closes each (the
    synchronous file systems' and those of Zarr's I/O loop) before forgetting them, and
    the next URL opened gets a working one."""
    import gc
    import logging

    import s3fs

    from dolb.data.store.object_stores import forget_s3_filesystems

    X, y = np.arange(12.0).reshape(6, 2), np.ones(6)
    write_dataset(f"{s3_bucket}/d", X, y, chunk_rows=2)
    assert np.array_equal(open_dataset(f"{s3_bucket}/d").read(np.arange(6))[0], X)
    held = list(s3fs.S3FileSystem._cache.values())
    assert {fs.asynchronous for fs in held} == {True, False}  # Zarr's and dolb's own
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        forget_s3_filesystems()
        del held
        gc.collect()
    assert s3fs.S3FileSystem._cache == {}
    assert "Unclosed" not in caplog.text
    assert np.array_equal(open_dataset(f"{s3_bucket}/d").read(np.arange(6))[0], X)


def test_a_bucket_that_does_not_exist_is_named_with_the_folder(s3_server, capsys):
    """The server says only "The specified bucket does not exist": the line names the URL."""
    from dolb.cli import main

    gone = "s3://no-such-bucket-of-dolb/runs/irma"
    assert main(["status", gone]) == 2
    assert capsys.readouterr().err == f"dolb: error: {gone}: The specified bucket does not exist\n"
