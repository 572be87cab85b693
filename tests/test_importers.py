"""Importers: RCV1, svmlight and MNIST converted into stores, checked against values
computed independently from the source files; bad input; the import cache."""

import bz2
import gzip
import hashlib
import itertools
import multiprocessing
import re
import shutil
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.datasets
from sklearn.utils import Bunch

from dolb.data import IMPORTERS, import_dataset
from dolb.errors import ConfigError, DataError
from tests.conftest import SHARED_DATA, requires_shared_data

RCV1_NPZ = SHARED_DATA / "rcv1" / "rcv1v2_mulan_dedup.npz"
LIBSVM = SHARED_DATA / "libsvm"
MNIST = SHARED_DATA / "mnist"
TOP_LEVEL = ("CCAT", "ECAT", "GCAT", "MCAT")


def read_all(dataset):
    """(X as a dense float64 array or CSR, y) of a whole store."""
    return dataset.read(slice(None))


def count_calls(monkeypatch, name):
    """Replace importer ``name``'s reader by a counting wrapper; return the call list."""
    calls = []
    importer = IMPORTERS[name]
    read = importer.read

    def counted(params):
        calls.append(params)
        return read(params)

    monkeypatch.setattr(importer, "read", counted)
    return calls


def raises(kind, *pieces):
    """pytest.raises(kind) for a message holding ``pieces`` verbatim, in that order."""
    return pytest.raises(kind, match=".*".join(re.escape(piece) for piece in pieces))


def snapshot(directory):
    """Every path under ``directory`` with its modification time."""
    return {path: path.stat().st_mtime_ns for path in directory.rglob("*")}


# --------------------------------------------------------------------------- RCV1


def npz_reference():
    """Features, top-level flags (n x 4) and 'exactly one' mask, straight from the npz."""
    with np.load(RCV1_NPZ) as npz:
        X = sp.csr_matrix((npz["data"], npz["indices"], npz["indptr"]), shape=tuple(npz["shape"]))
        names = list(npz["topic_names"])
        flags = npz["topics"][:, [names.index(code) for code in TOP_LEVEL]] == 1
    return X, flags, flags.sum(axis=1) == 1


@pytest.mark.realdata
@requires_shared_data("rcv1", "rcv1v2_mulan_dedup.npz")
def test_rcv1_sample_matches_the_documented_counts():
    _, flags, single = npz_reference()
    assert flags.sum(axis=0).tolist() == [12473, 4076, 7986, 7991]
    assert int(single.sum()) == 23428


@pytest.mark.realdata
@requires_shared_data("rcv1", "rcv1v2_mulan_dedup.npz")
def test_rcv1_every_pair_matches_the_npz(tmp_path):
    X, flags, single = npz_reference()
    total = 0
    for first, second in itertools.combinations(TOP_LEVEL, 2):
        is_first = single & flags[:, TOP_LEVEL.index(first)]
        is_second = single & flags[:, TOP_LEVEL.index(second)]
        rows = np.flatnonzero(is_first | is_second)
        (train,) = import_dataset("rcv1", {"path": str(RCV1_NPZ), "pair": [first, second]}, tmp_path).values()
        got_X, got_y = read_all(train)
        assert (train.n_rows, train.n_features) == (len(rows), X.shape[1])
        np.testing.assert_array_equal(got_y, np.where(is_first[rows], 1.0, -1.0))
        assert int((got_y > 0).sum()) == int(is_first.sum())
        assert abs(got_X - X[rows].astype(np.float64)).max() == 0
        assert got_X.nnz == X[rows].nnz
        total += train.n_rows
    assert total == 3 * 23428  # each single-category document is in three pairs


@pytest.mark.realdata
@requires_shared_data("rcv1", "rcv1v2_mulan_dedup.npz")
def test_rcv1_pair_order_decides_the_sign_and_defaults_to_ccat_ecat(tmp_path):
    default = import_dataset("rcv1", {"path": str(RCV1_NPZ)}, tmp_path)["train"]
    swapped = import_dataset("rcv1", {"path": str(RCV1_NPZ), "pair": ["ECAT", "CCAT"]}, tmp_path)["train"]
    assert (default.n_rows, int((default.labels() > 0).sum())) == (11531, 9616)
    np.testing.assert_array_equal(swapped.labels(), -default.labels())
    assert default.provenance["params"]["pair"] == ["CCAT", "ECAT"]
    assert default.provenance["sources"] == [
        {
            "file": RCV1_NPZ.name,
            "size": RCV1_NPZ.stat().st_size,
            "sha256": hashlib.sha256(RCV1_NPZ.read_bytes()).hexdigest(),
        }
    ]


@pytest.mark.realdata
@requires_shared_data("rcv1", "rcv1v2_mulan_dedup.npz")
def test_rcv1_sample_has_no_other_class(tmp_path):
    with pytest.raises(DataError, match="rcv1v2_mulan_dedup.npz: no document of class 'OTHER'"):
        import_dataset("rcv1", {"path": str(RCV1_NPZ), "pair": ["OTHER", "CCAT"]}, tmp_path)
    assert list(tmp_path.iterdir()) == []


def fake_rcv1():
    """A small Bunch shaped like sklearn's fetch_rcv1: docs 0 CCAT, 1 CCAT+ECAT,
    2 none of the four, 3 GCAT (+ a subtopic), 4 none, 5 MCAT, 6 GCAT."""
    names = np.array(["C11", "CCAT", "ECAT", "G15", "GCAT", "MCAT"], dtype=object)
    topics = np.zeros((7, 6), dtype=np.uint8)
    carried = [["CCAT"], ["CCAT", "ECAT"], [], ["G15", "GCAT"], ["C11"], ["MCAT"], ["GCAT"]]
    for row, codes in enumerate(carried):
        topics[row, [list(names).index(code) for code in codes]] = 1
    data = sp.csr_matrix(np.arange(1.0, 29.0).reshape(7, 4) * (np.arange(28).reshape(7, 4) % 3 > 0))
    return Bunch(data=data, target=sp.csr_matrix(topics), target_names=names)


def test_rcv1_from_sklearn_with_other_class(tmp_path, monkeypatch):
    calls = []

    def fetch(data_home=None, **kwargs):
        calls.append(data_home)
        return fake_rcv1()

    monkeypatch.setattr(sklearn.datasets, "fetch_rcv1", fetch)
    params = {"source": "sklearn", "data_home": str(tmp_path / "home"), "pair": ["OTHER", "GCAT"]}
    (train,) = import_dataset("rcv1", params, tmp_path / "data").values()
    X, y = read_all(train)
    np.testing.assert_array_equal(X.toarray(), fake_rcv1().data[[2, 3, 4, 6]].toarray())
    assert y.tolist() == [1.0, -1.0, 1.0, -1.0]
    assert calls == [str(tmp_path / "home")]
    assert train.provenance["sources"][0]["fetcher"] == "sklearn.datasets.fetch_rcv1"
    import_dataset("rcv1", {**params, "data_home": str(tmp_path / "elsewhere")}, tmp_path / "data")
    assert len(calls) == 1  # where sklearn keeps its copy does not change the corpus


def test_rcv1_from_sklearn_checks_the_bunch(tmp_path, monkeypatch):
    broken = fake_rcv1()
    broken.target = broken.target[:5]
    monkeypatch.setattr(sklearn.datasets, "fetch_rcv1", lambda data_home=None: broken)
    with raises(DataError, "fetch_rcv1(data_home=None): topics have shape (5, 6), expected (7, 6)"):
        import_dataset("rcv1", {"source": "sklearn"}, tmp_path)


def test_rcv1_bad_npz_files(tmp_path):
    not_zip = tmp_path / "notzip.npz"
    not_zip.write_bytes(b"hello")
    with pytest.raises(DataError, match="notzip.npz: cannot read it as an .npz archive"):
        import_dataset("rcv1", {"path": str(not_zip)}, tmp_path / "data")
    partial = tmp_path / "partial.npz"
    np.savez(partial, data=np.ones(1), indices=np.zeros(1, np.int32), indptr=np.array([0, 1]), shape=[1, 1])
    with pytest.raises(DataError, match="partial.npz: array 'topics' is missing"):
        import_dataset("rcv1", {"path": str(partial)}, tmp_path / "data")
    with pytest.raises(DataError, match="missing.npz: cannot read it"):
        import_dataset("rcv1", {"path": str(tmp_path / "missing.npz")}, tmp_path / "data")


@pytest.mark.parametrize(
    "params, message",
    [
        ({"pair": ["CCAT"]}, "parameter 'pair': expected a list of 2 values"),
        ({"pair": ["CCAT", "C11"]}, "parameter 'pair': 'C11' is not one of 'CCAT', 'ECAT'"),
        ({"pair": ["CCAT", "CCAT"]}, "parameter 'pair': ['CCAT', 'CCAT'] lists a value twice"),
        ({"pair": "CCAT,ECAT"}, "parameter 'pair': expected a list"),
        ({}, "parameter 'path': required when source = 'npz'"),
        ({"path": "x.npz", "data_home": "h"}, "parameter 'data_home': not used when source = 'npz'"),
        ({"source": "sklearn", "path": "x.npz"}, "parameter 'path': not used when source = 'sklearn'"),
        ({"source": "web"}, "parameter 'source': expected one of 'npz', 'sklearn'"),
        ({"path": "x.npz", "pairs": []}, "unknown parameter 'pairs'"),
    ],
)
def test_rcv1_bad_params(tmp_path, params, message):
    with pytest.raises(ConfigError, match="importer 'rcv1'") as info:
        import_dataset("rcv1", params, tmp_path)
    assert message in str(info.value)


# --------------------------------------------------------------------------- svmlight


def parse_svmlight(path, n_features):
    """Dense X and y of a plain-text, 1-based svmlight file, parsed with plain Python."""
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    X = np.zeros((len(lines), n_features))
    y = np.empty(len(lines))
    for row, line in enumerate(lines):
        label, *pairs = line.split()
        y[row] = float(label)
        for pair in pairs:
            index, value = pair.split(":")
            X[row, int(index) - 1] = float(value)
    return X, y


@pytest.mark.realdata
@requires_shared_data("libsvm", "a9a.t")
def test_svmlight_a9a_matches_a_plain_parse(tmp_path):
    files = {"path": str(LIBSVM / "a9a"), "test_path": str(LIBSVM / "a9a.t")}
    sets = import_dataset("svmlight", files, tmp_path)
    assert {part: (ds.n_rows, ds.n_features) for part, ds in sets.items()} == {
        "train": (32561, 123),
        "test": (16281, 123),
    }
    for part, file in (("train", "a9a"), ("test", "a9a.t")):
        X, y = read_all(sets[part])
        want_X, want_y = parse_svmlight(LIBSVM / file, 123)
        np.testing.assert_array_equal(X.toarray(), want_X)
        np.testing.assert_array_equal(y, want_y)
    assert int((sets["train"].labels() > 0).sum()) == 7841


@pytest.mark.realdata
@requires_shared_data("libsvm", "a9a.t")
def test_svmlight_width_is_the_largest_index_over_both_files(tmp_path):
    alone = import_dataset("svmlight", {"path": str(LIBSVM / "a9a.t")}, tmp_path)
    assert list(alone) == ["train"] and alone["train"].n_features == 122  # feature 123 never set
    wider = import_dataset("svmlight", {"path": str(LIBSVM / "a9a.t"), "n_features": 130}, tmp_path)
    assert wider["train"].n_features == 130


@pytest.mark.realdata
@requires_shared_data("libsvm", "tick_ijcnn1.tst.bz2")
def test_svmlight_ijcnn1_from_bz2(tmp_path):
    files = {"path": str(LIBSVM / "tick_ijcnn1.trn.bz2"), "test_path": str(LIBSVM / "tick_ijcnn1.tst.bz2")}
    sets = import_dataset("svmlight", files, tmp_path)
    assert {part: (ds.n_rows, ds.n_features) for part, ds in sets.items()} == {
        "train": (49990, 22),
        "test": (91701, 22),
    }
    for part, key in (("train", "path"), ("test", "test_path")):
        with bz2.open(files[key], "rt") as stream:
            lines = stream.read().splitlines()
        labels = np.array([float(line.split()[0]) for line in lines])
        np.testing.assert_array_equal(sets[part].labels(), np.where(labels > 0, 1.0, -1.0))
        first = {int(pair.split(":")[0]) - 1: float(pair.split(":")[1]) for pair in lines[0].split()[1:]}
        X, _ = sets[part].read(slice(0, 1))
        np.testing.assert_array_equal(X.toarray()[0, list(first)], list(first.values()))
        assert X.nnz == sum(value != 0 for value in first.values())


@pytest.mark.realdata
@requires_shared_data("libsvm", "w8a")
def test_svmlight_w8a(tmp_path):
    (train,) = import_dataset("svmlight", {"path": str(LIBSVM / "w8a")}, tmp_path).values()
    X, y = read_all(train)
    want_X, want_y = parse_svmlight(LIBSVM / "w8a", 300)
    assert X.shape == (49749, 300)
    np.testing.assert_array_equal(X.toarray(), want_X)
    np.testing.assert_array_equal(y, want_y)


@pytest.mark.realdata
@requires_shared_data("libsvm", "a9a")
def test_svmlight_truncated_a9a_names_file_and_line(tmp_path):
    text = (LIBSVM / "a9a").read_bytes()
    lines = text.splitlines(keepends=True)
    cut = sum(map(len, lines[:1000])) + lines[1000].index(b":") + 1  # line 1001 ends in "idx:"
    truncated = tmp_path / "a9a-truncated"
    truncated.write_bytes(text[:cut])
    with raises(DataError, f"svmlight file {truncated}, line 1001: malformed"):
        import_dataset("svmlight", {"path": str(truncated)}, tmp_path / "data")
    assert not (tmp_path / "data").exists() or list((tmp_path / "data").iterdir()) == []


@pytest.mark.realdata
@requires_shared_data("libsvm", "tick_ijcnn1.trn.bz2")
def test_svmlight_truncated_bz2(tmp_path):
    truncated = tmp_path / "ijcnn1.bz2"
    truncated.write_bytes((LIBSVM / "tick_ijcnn1.trn.bz2").read_bytes()[:300_000])
    with raises(DataError, f"svmlight file {truncated}: cannot read it", "truncated"):
        import_dataset("svmlight", {"path": str(truncated)}, tmp_path / "data")


@pytest.mark.realdata
@requires_shared_data("libsvm", "a9a")
def test_svmlight_index_beyond_given_width_names_the_row(tmp_path):
    lines = (LIBSVM / "a9a").read_text().splitlines()
    row = next(i for i, line in enumerate(lines) if max(int(p.split(":")[0]) for p in line.split()[1:]) > 100)
    where = f"svmlight file {LIBSVM / 'a9a'}, row {row}: feature index"
    with raises(DataError, where, "beyond n_features = 100"):
        import_dataset("svmlight", {"path": str(LIBSVM / "a9a"), "n_features": 100}, tmp_path)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_svmlight_three_labels_are_listed(tmp_path):
    path = write(tmp_path, "three", "1 1:1\n2 2:1\n3 1:0.5\n2 3:1\n")
    with raises(DataError, f"svmlight file {path}: ", "exactly two distinct labels, found 3: 1, 2, 3"):
        import_dataset("svmlight", {"path": path}, tmp_path / "data")


def test_svmlight_test_labels_must_be_training_labels(tmp_path):
    train = write(tmp_path, "train", "0 1:1\n1 2:1\n")
    test = write(tmp_path, "test", "1 1:1\n7 2:1\n")
    with raises(DataError, f"svmlight file {test}: labels 7 are not among the training labels 0, 1"):
        import_dataset("svmlight", {"path": train, "test_path": test}, tmp_path / "data")


def test_svmlight_labels_map_to_plus_minus_one(tmp_path):
    path = write(tmp_path, "toy", "0 1:1\n5 2:1\n5 1:2\n")
    (larger,) = import_dataset("svmlight", {"path": path}, tmp_path / "data").values()
    assert larger.labels().tolist() == [-1.0, 1.0, 1.0]
    (chosen,) = import_dataset("svmlight", {"path": path, "positive": 0}, tmp_path / "data").values()
    assert chosen.labels().tolist() == [1.0, -1.0, -1.0]
    with raises(ConfigError, "parameter 'positive': 3.0 is not a label of", "toy (labels: 0, 5)"):
        import_dataset("svmlight", {"path": path, "positive": 3}, tmp_path / "data")


@pytest.mark.parametrize("label", ["nan", "inf", "-inf"])
def test_svmlight_non_finite_label_names_file_and_row(tmp_path, label):
    train = write(tmp_path, "train", f"1 1:1\n{label} 2:1\n1 3:1\n")
    with raises(DataError, f"svmlight file {train}, row 1: label ", "is not a finite number"):
        import_dataset("svmlight", {"path": train}, tmp_path / "data")
    good = write(tmp_path, "good", "1 1:1\n-1 2:1\n")
    test = write(tmp_path, "test", f"-1 1:1\n1 2:1\n{label} 3:1\n")
    with raises(DataError, f"svmlight file {test}, row 2: label "):
        import_dataset("svmlight", {"path": good, "test_path": test}, tmp_path / "data")


def test_svmlight_malformed_line_is_named(tmp_path):
    path = write(tmp_path, "bad", "1 1:1\n-1 2:1\n# a comment\n1 3:x\n")
    with raises(DataError, f"svmlight file {path}, line 4: malformed"):
        import_dataset("svmlight", {"path": path}, tmp_path / "data")
    empty = write(tmp_path, "empty", "")
    with raises(DataError, f"svmlight file {empty} holds no examples"):
        import_dataset("svmlight", {"path": empty}, tmp_path / "data")
    with pytest.raises(DataError, match="source file .*nowhere: cannot read it"):
        import_dataset("svmlight", {"path": str(tmp_path / "nowhere")}, tmp_path / "data")


def test_svmlight_zero_based_indices(tmp_path):
    train = write(tmp_path, "train", "1 1:1\n-1 2:1\n")
    test = write(tmp_path, "test", "1 0:3\n-1 2:1\n")
    sets = import_dataset("svmlight", {"path": train, "test_path": test}, tmp_path / "data")
    assert sets["train"].n_features == 3  # index 0 in the test file: all files are 0-based
    np.testing.assert_array_equal(read_all(sets["test"])[0].toarray(), [[3, 0, 0], [0, 0, 1]])
    one_based = import_dataset("svmlight", {"path": train}, tmp_path / "data")["train"]
    np.testing.assert_array_equal(read_all(one_based)[0].toarray(), [[1, 0], [0, 1]])
    with raises(DataError, f"svmlight file {test}, row 0: feature index 0, but zero_based = false"):
        import_dataset("svmlight", {"path": train, "test_path": test, "zero_based": False}, tmp_path / "data")
    with pytest.raises(ConfigError, match="parameter 'zero_based': expected one of 'auto', true, false"):
        import_dataset("svmlight", {"path": train, "zero_based": 1}, tmp_path / "data")


# --------------------------------------------------------------------------- MNIST


def idx_bytes(magic, array):
    """An IDX file's bytes: big-endian magic and sizes, then uint8 values."""
    header = np.array([magic, *array.shape], dtype=">u4").tobytes()
    return header + array.astype(np.uint8).tobytes()


@pytest.fixture
def tiny_mnist(tmp_path):
    """A folder of four small gzipped IDX files: 12 train and 6 test images."""
    folder = tmp_path / "mnist"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for prefix, n in (("train", 12), ("t10k", 6)):
        images = rng.integers(0, 256, size=(n, 28, 28))
        labels = np.arange(n) % 10
        (folder / f"{prefix}-images-idx3-ubyte.gz").write_bytes(gzip.compress(idx_bytes(2051, images)))
        (folder / f"{prefix}-labels-idx1-ubyte.gz").write_bytes(gzip.compress(idx_bytes(2049, labels)))
    return folder


def raw_idx(path, header):
    """The uint8 body of a gzipped IDX file, skipping ``header`` bytes."""
    return np.frombuffer(gzip.decompress(path.read_bytes()), np.uint8, offset=header)


@pytest.mark.realdata
@requires_shared_data("mnist", "t10k-labels-idx1-ubyte.gz")
def test_mnist_three_versus_rest(tmp_path):
    sets = import_dataset("mnist", {"path": str(MNIST)}, tmp_path)
    for part, prefix, n, threes in (("train", "train", 60000, 6131), ("test", "t10k", 10000, 1010)):
        labels = raw_idx(MNIST / f"{prefix}-labels-idx1-ubyte.gz", 8)
        images = raw_idx(MNIST / f"{prefix}-images-idx3-ubyte.gz", 16).reshape(n, 784)
        X, y = read_all(sets[part])
        assert X.shape == (n, 784) and not sets[part].sparse
        np.testing.assert_array_equal(y, np.where(labels == 3, 1.0, -1.0))
        assert int((y > 0).sum()) == threes
        assert X.min() == 0.0 and X.max() == 1.0
        np.testing.assert_array_equal(X, (images / np.float32(255)).astype(np.float64))


@pytest.mark.realdata
@requires_shared_data("mnist", "t10k-labels-idx1-ubyte.gz")
def test_mnist_digit_pair_unscaled(tmp_path):
    params = {"path": str(MNIST), "positive": [3], "negative": [8], "scale": False}
    (test,) = [ds for part, ds in import_dataset("mnist", params, tmp_path).items() if part == "test"]
    labels = raw_idx(MNIST / "t10k-labels-idx1-ubyte.gz", 8)
    images = raw_idx(MNIST / "t10k-images-idx3-ubyte.gz", 16).reshape(10000, 784)
    keep = (labels == 3) | (labels == 8)
    X, y = read_all(test)
    assert X.shape == (int(keep.sum()), 784) and int((y > 0).sum()) == 1010
    np.testing.assert_array_equal(X, images[keep])
    np.testing.assert_array_equal(y, np.where(labels[keep] == 3, 1.0, -1.0))


def test_mnist_tiny_folder_and_default_negatives(tiny_mnist, tmp_path):
    sets = import_dataset("mnist", {"path": str(tiny_mnist), "positive": np.array([2, 1])}, tmp_path / "data")
    assert sets["train"].labels().tolist() == [-1, 1, 1] + [-1] * 7 + [-1, 1]
    assert sets["test"].n_rows == 6
    assert sets["train"].provenance["params"]["negative"] == [0, 3, 4, 5, 6, 7, 8, 9]
    images = raw_idx(tiny_mnist / "train-images-idx3-ubyte.gz", 16).reshape(12, 784)
    X, _ = read_all(sets["train"])
    np.testing.assert_array_equal(X, (images / np.float32(255)).astype(np.float64))
    np.testing.assert_array_equal(np.rint(X * 255), images)


def test_mnist_bad_magic_number(tiny_mnist, tmp_path):
    images = tiny_mnist / "train-images-idx3-ubyte.gz"
    raw = bytearray(gzip.decompress(images.read_bytes()))
    raw[3] = 0x01  # 2051 -> 2049
    images.write_bytes(gzip.compress(bytes(raw)))
    with raises(DataError, f"IDX file {images}: magic number 2049, expected 2051"):
        import_dataset("mnist", {"path": str(tiny_mnist)}, tmp_path / "data")


def test_mnist_truncated_files(tiny_mnist, tmp_path):
    labels = tiny_mnist / "t10k-labels-idx1-ubyte.gz"
    labels.write_bytes(gzip.compress(gzip.decompress(labels.read_bytes())[:-1]))
    with raises(DataError, f"IDX file {labels}: header promises 6 values", "found 5"):
        import_dataset("mnist", {"path": str(tiny_mnist)}, tmp_path / "data")
    images = tiny_mnist / "train-images-idx3-ubyte.gz"
    images.write_bytes(images.read_bytes()[:-30])
    with raises(DataError, f"IDX file {images}: cannot read it"):
        import_dataset("mnist", {"path": str(tiny_mnist)}, tmp_path / "data")
    images.unlink()
    with pytest.raises(DataError, match="neither train-images-idx3-ubyte.gz nor train-images-idx3-ubyte"):
        import_dataset("mnist", {"path": str(tiny_mnist)}, tmp_path / "data")
    assert not (tmp_path / "data").exists() or list((tmp_path / "data").iterdir()) == []


@pytest.mark.parametrize(
    "params, message",
    [
        ({"positive": [3], "negative": [3, 8]}, "parameter 'negative': digit 3 is also in 'positive'"),
        ({"positive": list(range(10))}, "parameter 'positive': leaves no digit for the negative class"),
        ({"positive": [10]}, "parameter 'positive': 10 is not one of 0, 1"),
        ({"positive": 3}, "parameter 'positive': expected a list of 1 to 10 values"),
        ({"scale": "yes"}, "parameter 'scale': expected one of true, false"),
    ],
)
def test_mnist_bad_params(tiny_mnist, tmp_path, params, message):
    with pytest.raises(ConfigError, match="importer 'mnist'") as info:
        import_dataset("mnist", {"path": str(tiny_mnist), **params}, tmp_path / "data")
    assert message in str(info.value)


# --------------------------------------------------------------------------- the cache


def test_unknown_importer_and_missing_path(tmp_path):
    known = "csv, faces, feather, mnist, npy, npz, parquet, rcv1, svmlight"
    with pytest.raises(ConfigError, match=f"unknown importer 'xlsx' \\(known: {known}\\)"):
        import_dataset("xlsx", {}, tmp_path)
    with pytest.raises(ConfigError, match="unknown importer 'svmlite' \\(did you mean 'svmlight'\\?"):
        import_dataset("svmlite", {}, tmp_path)
    for params in ({}, {"path": None}):
        with pytest.raises(ConfigError, match="importer 'svmlight': parameter 'path' is required"):
            import_dataset("svmlight", params, tmp_path)


def test_second_import_writes_nothing(tmp_path, monkeypatch):
    calls = count_calls(monkeypatch, "svmlight")
    path = write(tmp_path, "toy", "1 1:1\n-1 2:1\n1 3:0.5\n")
    first = import_dataset("svmlight", {"path": path}, tmp_path / "data")
    files = snapshot(tmp_path / "data")
    explicit = {"path": path, "zero_based": "auto", "n_features": None}  # the defaults, spelt out
    again = import_dataset("svmlight", explicit, tmp_path / "data")
    assert len(calls) == 1 and snapshot(tmp_path / "data") == files
    assert again["train"].fingerprint == first["train"].fingerprint
    moved = tmp_path / "moved"
    moved.mkdir()
    shutil.copy(path, moved / "toy")
    import_dataset("svmlight", {"path": str(moved / "toy")}, tmp_path / "data")
    assert len(calls) == 1  # the same content elsewhere is the same source
    write(tmp_path, "toy", "1 1:1\n-1 2:1\n1 3:0.25\n")
    changed = import_dataset("svmlight", {"path": path}, tmp_path / "data")
    import_dataset("svmlight", {"path": path, "positive": -1}, tmp_path / "data")
    assert len(calls) == 3 and len(list((tmp_path / "data").iterdir())) == 3
    assert changed["train"].fingerprint != first["train"].fingerprint


def test_provenance_names_importer_params_and_files(tmp_path):
    content = b"1 1:1\n-1 2:1\n"
    path = write(tmp_path, "toy", content.decode())
    (train,) = import_dataset("svmlight", {"path": path}, tmp_path / "data").values()
    about = train.provenance
    assert about["importer"] == "svmlight" and about["part"] == "train"
    assert about["params"] == {"n_features": None, "zero_based": "auto", "positive": None}
    assert about["sources"] == [
        {"file": "toy", "size": len(content), "sha256": hashlib.sha256(content).hexdigest()}
    ]
    (run,) = (tmp_path / "data").iterdir()
    assert run.name.startswith("svmlight-") and [p.name for p in run.iterdir()] == ["train"]


def import_fingerprints(args):
    """Fingerprints of an import run in another process."""
    return {part: ds.fingerprint for part, ds in import_dataset(*args).items()}


def test_concurrent_imports_in_two_processes(tmp_path):
    rows = "".join(f"{1 if i % 3 else -1} {i % 50 + 1}:{i / 7:.3f} {i % 50 + 60}:1\n" for i in range(20000))
    path = write(tmp_path, "many", rows)
    args = ("svmlight", {"path": path}, str(tmp_path / "data"))
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        results = list(pool.map(import_fingerprints, [args] * 4))
    assert len({tuple(sorted(r.items())) for r in results}) == 1
    assert [p.name.startswith("svmlight-") for p in (tmp_path / "data").iterdir()] == [True]
    assert import_fingerprints(args) == results[0]
