"""The Zarr dataset store: round trips, selections, fingerprints, corruption, validation."""

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from dolb.data import Dataset, open_dataset, write_dataset
from dolb.data.store import layout as layout_module
from dolb.data.store.layout import CODECS, choose
from dolb.errors import ConfigError, DataError


def dense(n=50, d=4, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "u":
        return rng.integers(0, 256, size=(n, d)).astype(dtype)
    return rng.standard_normal((n, d)).astype(dtype)


def sparse(n=60, d=30, density=0.2, dtype=np.float64, seed=0):
    X = sp.random(n, d, density=density, format="csr", dtype=dtype, rng=np.random.default_rng(seed))
    X.data += 1.0  # no explicit zeros
    return X


def flip_bytes(path: Path, count: int = 8) -> None:
    """Corrupt a chunk file on disk by inverting ``count`` bytes in its middle."""
    raw = bytearray(path.read_bytes())
    middle = len(raw) // 2
    raw[middle : middle + count] = bytes(255 - b for b in raw[middle : middle + count])
    path.write_bytes(bytes(raw))


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.uint8])
@pytest.mark.parametrize("chunk_rows", [None, 7])
def test_dense_round_trip_keeps_dtype_and_reads_float64(tmp_path, dtype, chunk_rows):
    X, y = dense(dtype=dtype), np.arange(50, dtype=np.int16)
    ds = write_dataset(tmp_path / "d", X, y, chunk_rows=chunk_rows)
    assert (ds.n_rows, ds.n_features, ds.sparse) == (50, 4, False)
    assert ds.arrays["X"].dtype == dtype
    got, labels = ds.read(slice(None))
    assert got.dtype == np.float64 and got.flags.c_contiguous
    np.testing.assert_array_equal(got, X.astype(np.float64))
    assert labels.dtype == np.int16
    np.testing.assert_array_equal(labels, y)
    np.testing.assert_array_equal(ds.labels(), y)


def test_explicit_chunk_rows_chunk_every_array(tmp_path):
    ds = write_dataset(tmp_path / "d", dense(), np.zeros(50), chunk_rows=7)
    assert ds.arrays["X"].chunks == (7, 4) and ds.arrays["y"].chunks == (7,)


@pytest.mark.parametrize(
    "X, y",
    [
        (np.array([[1.5, -2.0, 3.0]]), np.array([7.0])),  # a single row
        (np.arange(9.0).reshape(9, 1), np.arange(9.0)),  # one column
        (dense(n=20), np.arange(40.0).reshape(20, 2)),  # 2-D labels
    ],
)
def test_small_shapes_round_trip(tmp_path, X, y):
    ds = write_dataset(tmp_path / "d", X, y, chunk_rows=3)
    got_X, got_y = ds.read(slice(None))
    np.testing.assert_array_equal(got_X, X)
    np.testing.assert_array_equal(got_y, y)
    assert got_y.shape == y.shape


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("chunk_rows", [None, 7])
def test_sparse_round_trip(tmp_path, dtype, chunk_rows):
    X = sparse(dtype=dtype)
    ds = write_dataset(tmp_path / "s", X, np.arange(60.0), chunk_rows=chunk_rows)
    assert ds.sparse and (ds.n_rows, ds.n_features) == (60, 30)
    got, _ = ds.read(slice(None))
    assert isinstance(got, sp.csr_matrix) and got.dtype == np.float64
    np.testing.assert_array_equal(got.toarray(), X.toarray().astype(np.float64))
    np.testing.assert_array_equal(got.indptr, X.indptr)


def test_sparse_input_is_canonicalised(tmp_path):
    rows, cols, vals = [0, 0, 2, 1, 0], [3, 1, 0, 2, 3], [1.0, 2.0, 3.0, 4.0, 5.0]
    X = sp.coo_matrix((vals, (rows, cols)), shape=(3, 4))  # duplicate (0, 3), unsorted
    ds = write_dataset(tmp_path / "s", X, np.zeros(3))
    got, _ = ds.read(slice(None))
    np.testing.assert_array_equal(got.toarray(), X.toarray())
    np.testing.assert_array_equal(got.indices, [1, 3, 2, 0])
    np.testing.assert_array_equal(got.data, [2.0, 6.0, 4.0, 3.0])


def test_sparse_store_has_anndata_encoding_and_checksummed_codecs(tmp_path):
    ds = write_dataset(tmp_path / "s", sparse(), np.zeros(60))
    x_meta = json.loads((Path(ds.path) / "X" / "zarr.json").read_text())
    assert x_meta["node_type"] == "group"
    assert x_meta["attributes"] == {
        "encoding-type": "csr_matrix",
        "encoding-version": "0.1.0",
        "shape": [60, 30],
    }
    root = json.loads((Path(ds.path) / "zarr.json").read_text())["attributes"]
    assert root["dolb_dataset"] == 1 and root["fingerprint"] == ds.fingerprint
    def codecs(store, name):
        return json.loads((Path(store.path) / name / "zarr.json").read_text())["codecs"]

    for name in ("X/indices", "X/indptr"):  # small sorted integers: compressed
        found = codecs(ds, name)
        assert [c["name"] for c in found] == ["bytes", "blosc", "crc32c"]
        assert found[1]["configuration"]["cname"] == "lz4"
        assert found[1]["configuration"]["shuffle"] == "shuffle"
    # random float values barely compress: stored raw (faster to read), still checksummed
    assert [c["name"] for c in codecs(ds, "X/data")] == ["bytes", "crc32c"]
    ones = write_dataset(tmp_path / "ones", sp.csr_matrix(np.ones((60, 30))), np.zeros(60))
    assert [c["name"] for c in codecs(ones, "X/data")] == ["bytes", "blosc", "crc32c"]


def test_provenance_round_trip_and_must_be_json(tmp_path):
    about = {"source": "test", "params": {"a": [1, 2.5, None]}}
    assert write_dataset(tmp_path / "d", dense(), np.zeros(50), provenance=about).provenance == about
    with pytest.raises(ConfigError, match="provenance"):
        write_dataset(tmp_path / "e", dense(), np.zeros(50), provenance={"x": object()})
    assert not (tmp_path / "e").exists()


def test_pickles_as_its_path(tmp_path):
    ds = write_dataset(tmp_path / "s", sparse(), np.arange(60.0))
    again = pickle.loads(pickle.dumps(ds))
    assert isinstance(again, Dataset) and again.path == ds.path and again.fingerprint == ds.fingerprint
    assert len(pickle.dumps(ds)) < 500
    np.testing.assert_array_equal(again.read([5])[0].toarray(), ds.read([5])[0].toarray())


# --------------------------------------------------------------------------- selections


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_empty_selections(tmp_path, kind):
    X = dense() if kind == "dense" else sparse(n=50)
    ds = write_dataset(tmp_path / "d", X, np.arange(50.0), chunk_rows=7)
    for rows in ([], np.array([], dtype=np.int64), slice(5, 5), slice(9, 3)):
        got_X, got_y = ds.read(rows)
        assert got_X.shape == (0, X.shape[1]) and got_y.shape == (0,)


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_read_of_permuted_rows_equals_the_array(tmp_path, kind):
    X = dense(n=60) if kind == "dense" else sparse(n=60)
    full = X if kind == "dense" else X.toarray()
    y = np.arange(60.0) * 10
    ds = write_dataset(tmp_path / "d", X, y, chunk_rows=7)
    rows = np.random.default_rng(3).permutation(60)[:25]
    got_X, got_y = ds.read(rows)
    got = got_X if kind == "dense" else got_X.toarray()
    np.testing.assert_array_equal(got, full[rows])
    np.testing.assert_array_equal(got_y, y[rows])
    for selection in (np.array([59, 0]), [3, 4, 5], [1, 8, 30], slice(2, 50, 3), slice(None, None, -1)):
        got = ds.read(selection)[0]
        got = got if kind == "dense" else got.toarray()
        np.testing.assert_array_equal(got, full[selection])


@pytest.mark.parametrize(
    "rows, message",
    [([1, 1], "twice"), ([0, 50], "outside"), ([-1], "outside"), ([0.5], "integers"), ([[1]], "1-D")],
)
def test_bad_row_selections_raise_config_error(tmp_path, rows, message):
    ds = write_dataset(tmp_path / "d", dense(), np.zeros(50))
    with pytest.raises(ConfigError, match=message) as info:
        ds.read(rows)
    assert str(tmp_path / "d") in str(info.value)


# --------------------------------------------------------------------------- fingerprint


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_fingerprint_ignores_chunking_and_sees_one_value(tmp_path, kind):
    X = dense(n=40) if kind == "dense" else sparse(n=40)
    y = np.arange(40.0)
    prints = {
        write_dataset(tmp_path / f"c{c}", X, y, chunk_rows=c, provenance={"c": c}).fingerprint
        for c in (None, 1, 7, 40)
    }
    assert len(prints) == 1
    changed = X.copy()
    if kind == "dense":
        changed[13, 2] = 99.0
    else:
        changed.data[7] += 1.0
    assert write_dataset(tmp_path / "x", changed, y).fingerprint not in prints
    y_changed = y.copy()
    y_changed[39] = -1.0
    assert write_dataset(tmp_path / "y", X, y_changed).fingerprint not in prints
    assert write_dataset(tmp_path / "t", X, y.astype(np.float32)).fingerprint not in prints


def test_verify_passes_on_a_fresh_store(tmp_path):
    write_dataset(tmp_path / "d", dense(), np.zeros(50), chunk_rows=7).verify()
    write_dataset(tmp_path / "s", sparse(), np.zeros(60), chunk_rows=7).verify()


# --------------------------------------------------------------------------- corruption


def test_corrupted_dense_chunk_is_named_on_read_and_verify(tmp_path):
    ds = write_dataset(tmp_path / "d", dense(n=50, d=40), np.zeros(50), chunk_rows=10)
    flip_bytes(Path(ds.path) / "X" / "c" / "2" / "0")
    np.testing.assert_array_equal(ds.read(slice(0, 20))[0], dense(n=50, d=40)[:20])  # other chunks fine
    for action in (lambda: ds.read([25]), lambda: ds.read(slice(15, 35)), ds.verify):
        with pytest.raises(DataError) as info:
            action()
        message = str(info.value)
        for part in (ds.path, "'X' chunk 2", "file X/c/2/0", "rows 20..29"):
            assert part in message


def test_corrupted_sparse_chunk_is_named(tmp_path):
    ds = write_dataset(tmp_path / "s", sparse(n=60, d=30, density=0.5), np.zeros(60), chunk_rows=10)
    flip_bytes(Path(ds.path) / "X" / "data" / "c" / "1")
    with pytest.raises(DataError, match=r"'X/data' chunk 1 \(file X/data/c/1, elements"):
        ds.verify()
    with pytest.raises(DataError, match="'X/data' chunk 1"):
        ds.read(slice(None))


def test_corrupted_indptr_fails_at_open(tmp_path):
    ds = write_dataset(tmp_path / "s", sparse(), np.zeros(60))
    flip_bytes(Path(ds.path) / "X" / "indptr" / "c" / "0")
    with pytest.raises(DataError, match="'X/indptr' chunk 0"):
        open_dataset(ds.path)


def test_swapped_valid_chunk_is_named_on_read_and_verify(tmp_path):
    ds = write_dataset(tmp_path / "d", dense(n=40), np.zeros(40), chunk_rows=10)
    chunks = Path(ds.path) / "X" / "c"
    (chunks / "1" / "0").write_bytes((chunks / "0" / "0").read_bytes())  # codec checksums still match
    for action in (lambda: ds.read(slice(10, 20)), ds.verify):
        with pytest.raises(DataError, match=r"'X' chunk 1 \(file X/c/1/0, rows 10..19\) is missing, damaged or misplaced"):
            action()


def test_deleted_chunk_file_is_named_on_read_and_verify(tmp_path):
    ds = write_dataset(tmp_path / "d", np.ones((40, 3)), np.arange(1.0, 41.0), chunk_rows=10)
    (Path(ds.path) / "y" / "c" / "3").unlink()  # zarr reads a missing chunk as zeros
    for action in (lambda: ds.read([35]), ds.verify):
        with pytest.raises(DataError, match=r"'y' chunk 3 \(file y/c/3, rows 30..39\) is missing, damaged or misplaced"):
            action()


def test_edited_fingerprint_fails_verify(tmp_path):
    ds = write_dataset(tmp_path / "d", dense(n=40), np.zeros(40), chunk_rows=10)
    meta = Path(ds.path) / "zarr.json"
    document = json.loads(meta.read_text())
    document["attributes"]["fingerprint"] = "0" * 64
    meta.write_text(json.dumps(document))
    with pytest.raises(DataError, match="does not match its fingerprint"):
        open_dataset(ds.path).verify()


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_dense_values_name_the_row_and_leave_nothing(tmp_path, bad):
    X = dense(n=30)
    X[17, 2] = bad
    X[23, 0] = bad
    with pytest.raises(DataError, match="X row 17 holds NaN or Inf"):
        write_dataset(tmp_path / "d", X, np.zeros(30), chunk_rows=4)
    assert leftovers(tmp_path) == []


def test_non_finite_labels_and_sparse_values_name_the_row(tmp_path):
    y = np.zeros((30, 2))
    y[11, 1] = np.nan
    with pytest.raises(DataError, match="y row 11"):
        write_dataset(tmp_path / "d", dense(n=30), y)
    X = sparse(n=30, density=0.5)
    assert X.indptr[22] > X.indptr[21]
    X.data[X.indptr[21]] = np.inf  # first non-zero of row 21
    with pytest.raises(DataError, match="X row 21 holds NaN or Inf"):
        write_dataset(tmp_path / "s", X, np.zeros(30), chunk_rows=4)
    assert leftovers(tmp_path) == []


def test_sparse_index_out_of_range(tmp_path):
    X = sp.csr_matrix((np.ones(3), np.array([0, 5, 2]), np.array([0, 1, 2, 3])), shape=(3, 4))
    with pytest.raises(DataError, match="X row 1 has column index 5 outside"):
        write_dataset(tmp_path / "s", X, np.zeros(3))
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    "X, y, message",
    [
        (np.zeros((5, 2)), np.zeros(4), r"y must have shape \(5,\)"),
        (np.zeros((0, 2)), np.zeros(0), "at least one row"),
        (np.zeros((5, 2)), np.zeros((5, 2, 1)), "y must have shape"),
        (np.zeros(5), np.zeros(5), "X must be 2-D"),
        (np.array([["a"]]), np.zeros(1), "must hold numbers"),
        (np.zeros((2, 2)), np.array(["a", "b"]), "y must hold numbers"),
    ],
)
def test_bad_shapes_and_dtypes(tmp_path, X, y, message):
    with pytest.raises(DataError, match=message):
        write_dataset(tmp_path / "d", X, y)
    assert leftovers(tmp_path) == []


def test_bad_chunk_rows(tmp_path):
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ConfigError, match="chunk_rows"):
            write_dataset(tmp_path / "d", dense(), np.zeros(50), chunk_rows=bad)


# --------------------------------------------------------------------------- opening, overwriting


def test_missing_store(tmp_path):
    with pytest.raises(DataError, match=f"no dataset at {tmp_path / 'nowhere'}"):
        open_dataset(tmp_path / "nowhere")


def test_folders_that_are_not_dolb_datasets(tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "notes.txt").write_text("hello")
    with pytest.raises(DataError, match=f"{tmp_path / 'plain'} is not a dolb dataset"):
        open_dataset(tmp_path / "plain")
    import zarr

    zarr.create_group(str(tmp_path / "group"), attributes={"other": 1})
    with pytest.raises(DataError, match="attribute 'dolb_dataset' missing"):
        open_dataset(tmp_path / "group")
    (tmp_path / "file").write_text("x")
    with pytest.raises(DataError, match="file is a file, not a dataset store: import it with an importer"):
        open_dataset(tmp_path / "file")


def test_overwrite_semantics(tmp_path):
    path = tmp_path / "d"
    first = write_dataset(path, dense(n=10), np.zeros(10))
    with pytest.raises(DataError, match="already exists"):
        write_dataset(path, dense(n=20), np.zeros(20))
    assert open_dataset(path).fingerprint == first.fingerprint
    second = write_dataset(path, dense(n=20), np.zeros(20), overwrite=True)
    assert second.n_rows == 20 and open_dataset(path).fingerprint != first.fingerprint
    assert leftovers(tmp_path) == ["d"]
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "keep.txt").write_text("precious")
    with pytest.raises(DataError, match="not a dolb dataset; refusing"):
        write_dataset(tmp_path / "other", dense(), np.zeros(50), overwrite=True)
    assert (tmp_path / "other" / "keep.txt").read_text() == "precious"


def test_empty_directory_is_a_free_target(tmp_path):
    (tmp_path / "d").mkdir()
    assert write_dataset(tmp_path / "d", dense(), np.zeros(50)).n_rows == 50


def test_store_behind_an_fsspec_url(tmp_path):
    url = f"file://{tmp_path}/remote/store"
    X = sp.random(50, 30, density=0.2, format="csr", random_state=3)
    written = write_dataset(url, X, np.arange(50.0) % 2 * 2 - 1, chunk_rows=16)
    ds = open_dataset(url)
    assert ds.path == url and ds.sparse and ds.fingerprint == written.fingerprint
    Xr, y = ds.read(np.array([40, 3]))
    assert np.array_equal(Xr.toarray(), X[[40, 3]].toarray()) and y.tolist() == [-1.0, 1.0]
    local = write_dataset(tmp_path / "local", X, np.arange(50.0) % 2 * 2 - 1, chunk_rows=16)
    assert local.fingerprint == ds.fingerprint  # same content, same fingerprint, wherever stored
    with pytest.raises(DataError, match="already exists"):
        write_dataset(url, X, np.zeros(50))
    assert write_dataset(url, X[:10], np.zeros(10), overwrite=True).n_rows == 10
    with pytest.raises(DataError, match="no dataset at"):
        open_dataset(f"file://{tmp_path}/remote/absent")
    with pytest.raises(DataError, match="NaN"):
        write_dataset(f"file://{tmp_path}/remote/bad", np.array([[np.nan]]), np.zeros(1))
    assert not (tmp_path / "remote" / "bad").exists()


# --------------------------------------------------------------------------- layout: codec and chunk size


def big_sparse(n=3000, per_row=100, seed=1):
    """300,000 non-zeros: data (2.4 MB) and indices (1.2 MB) are large enough to measure."""
    rng = np.random.default_rng(seed)
    indices = np.sort(np.stack([rng.choice(5000, per_row, replace=False) for _ in range(n)]), axis=1)
    pointers = np.arange(0, n * per_row + 1, per_row)
    return sp.csr_matrix((rng.random(n * per_row) + 0.5, indices.ravel(), pointers), shape=(n, 5000))


def test_layout_is_measured_and_recorded_and_values_do_not_depend_on_it(tmp_path):
    X, y = big_sparse(), np.where(np.arange(3000) % 3, 1.0, -1.0)
    measured = write_dataset(tmp_path / "m", X, y)
    layout = measured.layout
    assert list(layout) == ["X/data", "X/indices", "X/indptr", "y"]
    for name in ("X/data", "X/indices"):
        record = layout[name]
        assert record["chosen"] == "measured" and record["codec"] in CODECS
        # 300,000 elements: the default chunk (all of them) and 256k; 1M clips to the default
        assert sorted(record["candidates"]) == sorted(f"{c}/{n}" for c in CODECS for n in ("300000", "256k"))
        assert all(rate > 0 for rate in record["candidates"].values())
        assert record["chunk_elements"] == measured.arrays[name].chunks[0]
    assert layout["X/data"]["chunk_elements"] == layout["X/indices"]["chunk_elements"]  # gathered in one pass
    assert layout["y"] == {"codec": "lz4", "chunk_elements": 3000, "chosen": "default", "candidates": {}}
    given = write_dataset(tmp_path / "g", X, y, codec="zstd", chunk_rows=1000)
    assert {r["chosen"] for r in given.layout.values()} == {"given"}
    assert given.layout["X/data"]["chunk_elements"] == 100_000 == given.arrays["X/data"].chunks[0]
    data_codecs = json.loads((Path(given.path) / "X/data/zarr.json").read_text())["codecs"]
    assert data_codecs[1]["configuration"]["cname"] == "zstd"
    assert given.fingerprint == measured.fingerprint  # content only
    order = np.random.default_rng(0).permutation(3000)
    (Xg, yg), (Xm, ym) = given.read(order), measured.read(order)
    np.testing.assert_array_equal(Xg.toarray(), X[order].toarray())
    np.testing.assert_array_equal(Xm.toarray(), X[order].toarray())
    np.testing.assert_array_equal(yg, ym)
    assert given.verify() == 3 + 3 + 1 + 3 and measured.verify() >= 4


@pytest.mark.parametrize(
    "zstd_seconds, expected",
    [  # random floats are raw by default, sorted small indices LZ4; the default chunk is all 300,000
        (0.5, {"X/data": ("zstd", 1 << 18), "X/indices": ("zstd", 1 << 18)}),  # twice as fast: chosen
        (0.9, {"X/data": ("raw", 300_000), "X/indices": ("lz4", 300_000)}),  # 11 % faster: defaults stay
    ],
)
def test_a_candidate_replaces_the_default_only_when_more_than_20_percent_faster(
    tmp_path, monkeypatch, zstd_seconds, expected
):
    def timed(files, dtype):  # every candidate takes 1 s, but zstd in chunks of 256k elements
        return {key: zstd_seconds if key == ("zstd", 1 << 18) else 1.0 for key in files}

    monkeypatch.setattr(layout_module, "_time", timed)
    ds = write_dataset(tmp_path / "s", big_sparse(), np.zeros(3000))
    for name, itemsize in (("X/data", 8), ("X/indices", 4)):
        assert (ds.layout[name]["codec"], ds.arrays[name].chunks[0]) == expected[name]
        rate = 300_000 * itemsize / zstd_seconds / 1e6  # MB/s of the decoded sample
        assert ds.layout[name]["candidates"]["zstd/256k"] == pytest.approx(rate, abs=0.05)


def test_dense_rows_are_chunked_as_measured_and_y_follows_them(tmp_path, monkeypatch):
    def timed(files, dtype):  # one chunk of all 20,000 rows (the 1M candidate, clipped) twice as fast
        return {key: 0.5 if key[1] == 20_000 else 1.0 for key in files}

    monkeypatch.setattr(layout_module, "_time", timed)
    X = np.random.default_rng(0).standard_normal((20_000, 20))  # 3.2 MB; y (160 kB) is too small to measure
    ds = write_dataset(tmp_path / "d", X, np.zeros(20_000))
    rows = 20_000  # the default would be 13,107 rows (2 MB)
    assert ds.arrays["X"].chunks == (rows, 20) and ds.arrays["y"].chunks == (rows,)
    assert ds.layout["X"]["chosen"] == "measured" and ds.layout["X"]["chunk_elements"] == rows * 20
    assert ds.layout["y"] == {"codec": "lz4", "chunk_elements": rows, "chosen": "default", "candidates": {}}
    np.testing.assert_array_equal(ds.read(slice(None))[0], X)


def test_choose_prefers_the_default_and_the_first_of_equals():
    assert choose({"raw": 100.0, "lz4": 120.0}, "raw") == "raw"  # 20 % exactly: not more
    assert choose({"raw": 100.0, "lz4": 121.0}, "raw") == "lz4"
    assert choose({"lz4": 200.0, "zstd": 200.0, "raw": 100.0}, "raw") == "lz4"


def test_bad_codec_is_a_one_line_config_error(tmp_path):
    with pytest.raises(ConfigError, match=r"^dataset .*: codec must be one of raw, lz4, zstd, got 'gzip'$"):
        write_dataset(tmp_path / "s", np.eye(3), np.zeros(3), codec="gzip")
    assert not (tmp_path / "s").exists()
