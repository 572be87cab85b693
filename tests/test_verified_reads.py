"""Verified reads: a deleted, misplaced or damaged chunk, or edited array metadata, is a
DataError naming the store, array and chunk or field, never data; stores without a
chunk manifest are refused; `dolb verify`; a cell that reads a damaged chunk fails."""

import json
import shutil
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from dolb.cli import main
from dolb.data import ChunkCache, generate, materialize, open_dataset, stream_blocks, write_dataset
from dolb.data.store.manifest import MANIFEST_KEY
from dolb.errors import DataError
from dolb.identity import digest
from dolb.results.query import failures
from dolb.results.store import ResultStore
from dolb.results.tables import read_results

DAMAGED = "is missing, damaged or misplaced: its content does not match the chunk manifest"


def dense_store(path: Path):
    """40 x 3 float64, chunks of 10 rows."""
    X = np.arange(120.0).reshape(40, 3)
    return write_dataset(path, X, np.arange(1.0, 41.0), chunk_rows=10)


def sparse_store(path: Path):
    """40 x 30 CSR, 3 non-zeros a row: data and indices in chunks of 30 elements."""
    rng = np.random.default_rng(0)
    indices = np.sort(np.stack([rng.choice(30, 3, replace=False) for _ in range(40)]), axis=1).ravel()
    X = sp.csr_matrix((rng.random(120) + 0.5, indices, np.arange(0, 121, 3)), shape=(40, 30))
    return write_dataset(path, X, np.where(np.arange(40) % 2, 1.0, -1.0), chunk_rows=10)


def test_store(path: Path):
    """The test part of an IRMA run, chunks of 10 rows."""
    X, y, _ = generate("irma", {"n_sequences": 2, "length": 3, "n_test": 40}, seed=3)["test"]
    return write_dataset(path, X, y, chunk_rows=10)


test_store.__test__ = False  # a store maker, not a test

# (store maker, how a cell reads it, array, chunk key of chunk 1, what chunk 1 holds)
CASES = {
    "dense X": (dense_store, "stream", "X", "X/c/1/0", "rows 10..19"),
    "dense y": (dense_store, "stream", "y", "y/c/1", "rows 10..19"),
    "test store": (test_store, "test", "X", "X/c/1/0", "rows 10..19"),
    "CSR indices": (sparse_store, "stream", "X/indices", "X/indices/c/1", "elements 30..59"),
    "CSR data": (sparse_store, "stream", "X/data", "X/data/c/1", "elements 30..59"),
}


def read_everything(path: Path, how: str) -> None:
    """Open the store and read all of it as a cell does (a stream or a test set)."""
    ds = open_dataset(path)
    if how == "test":
        ds.read(slice(None))
        ds.read(np.arange(ds.n_rows)[::-1].copy())
    else:
        for _ in stream_blocks(ds, np.random.default_rng(0).permutation(ds.n_rows), block_size=16):
            pass


def expected(path: Path, array: str, key: str, where: str, index: int = 1) -> str:
    return f"dataset {path}: array {array!r} chunk {index} (file {key}, {where}) {DAMAGED}"


@pytest.mark.parametrize("case", CASES)
def test_deleted_chunk_is_named_never_zeros(tmp_path, case):
    make, how, array, key, where = CASES[case]
    ds = make(tmp_path / "store")
    read_everything(tmp_path / "store", how)  # intact: reads
    (Path(ds.path) / key).unlink()
    with pytest.raises(DataError) as info:
        read_everything(tmp_path / "store", how)
    assert str(info.value) == expected(tmp_path / "store", array, key, where)


@pytest.mark.parametrize("case", CASES)
def test_valid_chunk_copied_onto_another_key_is_named(tmp_path, case):
    make, how, array, key, where = CASES[case]
    ds = make(tmp_path / "store")
    first = Path(ds.path) / key.replace("/c/1", "/c/0")
    (Path(ds.path) / key).write_bytes(first.read_bytes())  # its codec checksum is valid
    with pytest.raises(DataError) as info:
        read_everything(tmp_path / "store", how)
    assert str(info.value) == expected(tmp_path / "store", array, key, where)


def test_deleted_indptr_chunk_fails_at_open(tmp_path):
    ds = sparse_store(tmp_path / "s")
    (Path(ds.path) / "X/indptr/c/0").unlink()
    with pytest.raises(DataError) as info:
        open_dataset(ds.path)
    assert str(info.value) == expected(tmp_path / "s", "X/indptr", "X/indptr/c/0", "elements 0..40", 0)


def edit_json(path: Path, change) -> None:
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))


@pytest.mark.parametrize(
    ("array", "change", "message"),
    [
        ("X", lambda m: m.update(data_type="int64"), "array 'X' has dtype '<i8', but was written with '<f8'"),
        ("y", lambda m: m.update(data_type="float32"), "array 'y' has dtype '<f4', but was written with '<f8'"),
        ("X", lambda m: m.update(fill_value=1.0), "array 'X' has fill value '1.0', but was written with '0.0'"),
        ("y", lambda m: m.update(fill_value=-1.0), "array 'y' has fill value '-1.0', but was written with '0.0'"),
        ("X/data", lambda m: m.update(fill_value=2.0), "array 'X/data' has fill value '2.0'"),
        ("X/indices", lambda m: m.update(data_type="uint32"), "array 'X/indices' has dtype '<u4'"),
        ("y", lambda m: m.update(shape=[30]), "array 'y' has shape [30], but was written with [40]"),
        ("X", lambda m: m["chunk_grid"]["configuration"].update(chunk_shape=[20, 3]), "array 'X' has chunk shape [20, 3]"),
    ],
)
def test_edited_array_metadata_fails_at_open(tmp_path, array, change, message):
    ds = (sparse_store if array.startswith("X/") else dense_store)(tmp_path / "store")
    edit_json(Path(ds.path) / array / "zarr.json", change)
    with pytest.raises(DataError) as info:
        open_dataset(ds.path)
    assert str(info.value).startswith(f"dataset {ds.path}: {message}")
    assert "\n" not in str(info.value)


def test_edited_byte_order_fails_at_the_first_chunk(tmp_path):
    ds = dense_store(tmp_path / "store")
    edit_json(Path(ds.path) / "X" / "zarr.json", lambda m: m["codecs"][0]["configuration"].update(endian="big"))
    with pytest.raises(DataError, match=f"'X' chunk 0 \\(file X/c/0/0, rows 0..9\\) {DAMAGED}"):
        open_dataset(ds.path).read(slice(0, 5))


def strip_manifest(path: Path) -> None:
    """Make ``path`` look written by a dolb without chunk manifests."""
    edit_json(path / "zarr.json", lambda m: m["attributes"].pop(MANIFEST_KEY))


@pytest.mark.parametrize("make", [dense_store, sparse_store])
def test_store_without_manifest_is_refused_in_one_line(tmp_path, make):
    ds = make(tmp_path / "old")
    strip_manifest(Path(ds.path))
    with pytest.raises(DataError) as info:
        open_dataset(ds.path)
    assert str(info.value) == (
        f"dataset {ds.path}: no chunk manifest (not written by this dolb, or damaged): write it again"
    )


def test_a_shared_cache_tells_stores_of_equal_content_apart(tmp_path):
    X = np.arange(120.0).reshape(40, 3)
    seven = write_dataset(tmp_path / "seven", X, np.zeros(40), chunk_rows=7)
    ten = write_dataset(tmp_path / "ten", X, np.zeros(40), chunk_rows=10)
    assert seven.fingerprint == ten.fingerprint  # content only
    cache = ChunkCache(max_bytes=1 << 20)
    for ds in (seven, ten, seven):
        blocks = [block for block, _ in stream_blocks(ds, np.arange(39, -1, -1), block_size=40, cache=cache)]
        np.testing.assert_array_equal(blocks[0], X[::-1])


# --------------------------------------------------------------------------- dolb verify


def test_dolb_verify_intact_and_damaged(tmp_path, capsys):
    dense, sparse = dense_store(tmp_path / "d"), sparse_store(tmp_path / "s")
    assert main(["verify", dense.path]) == 0
    assert main(["verify", sparse.path]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{dense.path}: ok (40 rows, 8 chunks checked)",  # X and y: 4 chunks each
        "  X: lz4, 30 elements a chunk (default)",  # the layout record: too small to measure
        "  y: lz4, 10 elements a chunk (default)",
        f"{sparse.path}: ok (40 rows, 13 chunks checked)",  # data, indices, y: 4 each; indptr 1
        "  X/data: raw, 30 elements a chunk (default)",  # random floats do not compress
        "  X/indices: lz4, 30 elements a chunk (default)",
        "  X/indptr: lz4, 41 elements a chunk (default)",
        "  y: lz4, 10 elements a chunk (default)",
    ]
    (tmp_path / "s" / "X/data/c/3").unlink()
    assert main(["verify", sparse.path]) == 2
    err = capsys.readouterr().err
    assert err == f"dolb: error: {expected(tmp_path / 's', 'X/data', 'X/data/c/3', 'elements 90..119', 3)}\n"
    edit_json(tmp_path / "d" / "zarr.json", lambda m: m["attributes"].update(fingerprint="0" * 64))
    assert main(["verify", dense.path]) == 2
    assert capsys.readouterr().err.startswith(f"dolb: error: dataset {dense.path}: content does not match")
    strip_manifest(tmp_path / "d")
    assert main(["verify", dense.path]) == 2
    assert "no chunk manifest (not written by this dolb, or damaged)" in capsys.readouterr().err


# --------------------------------------------------------------------------- the data cache


def test_cache_entry_of_the_old_layout_is_never_opened(tmp_path):
    params, seed = {"n_sequences": 2, "length": 3, "n_test": 20}, 5
    new = materialize("irma", params, seed, tmp_path / "fresh")
    # the same run as the previous layout stored it: keyed by the identity alone, no manifest
    about = new["train"].provenance
    identity = {"generator": "irma", "params": about["params"], "seed": about["seed"]}
    old = tmp_path / "cache" / f"irma-{digest(identity, compact=False, length=16)}"
    shutil.copytree(Path(new["train"].path).parent, old)
    for part in ("train", "test"):
        strip_manifest(old / part)
    rebuilt = materialize("irma", params, seed, tmp_path / "cache")
    assert {Path(ds.path).parent.name for ds in rebuilt.values()} == {Path(new["train"].path).parent.name}
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == sorted([old.name, Path(new["train"].path).parent.name])
    assert {part: ds.fingerprint for part, ds in rebuilt.items()} == {part: ds.fingerprint for part, ds in new.items()}


# --------------------------------------------------------------------------- a failing cell


PIPELINE = """
[pipeline]
name = "damaged"
seed = 4

[datasets.irma]
generator = "irma"
params = { n_sequences = 4, length = 30, n_test = 50 }

[experiments.e]
dataset = "irma"
task = "regression"
split = { scheme = "sequences", count = 4 }
checkpoints = [10, 30]
metrics = ["test_mse"]
learners = [{ learner = "irma", complexity = 3, params = { basis = "legendre", domain_high = 3.0 } }]
"""


@pytest.mark.e2e
def test_a_cell_reading_a_deleted_chunk_fails_with_the_chunk_named(tmp_path, capsys, monkeypatch):
    cache = tmp_path / "cache"  # this test damages its data: a cache of its own
    monkeypatch.setenv("DOLB_DATA_CACHE", str(cache))
    pipeline = tmp_path / "p.toml"
    pipeline.write_text(textwrap.dedent(PIPELINE))
    assert main(["plan", str(pipeline), "--out", str(tmp_path / "first")]) == 0  # builds the data, as a run would
    (chunk,) = cache.glob("irma-*/train/X/c/0/0")
    chunk.unlink()  # Zarr alone would read zeros
    out = tmp_path / "second"
    assert main(["run", str(pipeline), "--out", str(out), "--workers", "1", "--no-progress"]) == 1
    capsys.readouterr()
    assert main(["status", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "0 cells stored, 4 failed" in printed
    assert printed.count(f"array 'X' chunk 0 (file X/c/0/0, rows 0..119) {DAMAGED}") == 4
    failed = failures(ResultStore(out))
    assert len(failed) == 4 and failed["error"].str.contains(str(chunk.parents[3])).all()
    assert read_results(out).empty
