"""One's own data: CSV, Parquet, Feather, .npy and .npz files through the importers, and
arrays handed to the Python API, stored exactly as ``write_dataset`` stores the same
arrays; bad files and labels a binary task cannot use refused on one line, before any
cell runs, with nothing written."""

import textwrap

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import dolb
from dolb.cli import main
from dolb.data import import_dataset, open_dataset, write_dataset
from dolb.errors import ConfigError, DataError
from dolb.execution.datasets import open_datasets
from dolb.experiment.cells import expand_groups
from dolb.experiment.pipeline import load_pipeline
from tests.conftest import stored_values


def _table(n: int = 60) -> pd.DataFrame:
    """Features with zeros (so that sparse storage leaves some out), whole and fractional
    numbers, and 0/1 labels in the column ``label``."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(n, 4)) * (rng.random((n, 4)) < 0.6)
    X[:, 2] = rng.integers(0, 5, n)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    frame["label"] = (X[:, 0] + X[:, 1] > 0).astype(int)
    return frame


def _write(kind: str, folder, frame: pd.DataFrame) -> dict:
    """The importer and parameters of ``frame`` written as a ``kind`` file in ``folder``."""
    X, y = frame[["a", "b", "c", "d"]].to_numpy(), frame["label"].to_numpy()
    if kind in ("csv", "parquet", "feather"):
        path = folder / f"mine.{kind}"
        getattr(frame, f"to_{kind}")(path, **({"index": False} if kind == "csv" else {}))
        return {"importer": kind, "path": str(path), "label": "label"}
    if kind == "npy-labels":
        np.save(folder / "X.npy", X)
        np.save(folder / "y.npy", y)
        return {"importer": "npy", "path": str(folder / "X.npy"), "labels_path": str(folder / "y.npy")}
    if kind == "npy-column":
        np.save(folder / "Xy.npy", np.column_stack([X[:, :2], y, X[:, 2:]]))
        return {"importer": "npy", "path": str(folder / "Xy.npy"), "label": 2}
    np.savez(folder / "mine.npz", features=X, y=y)
    return {"importer": "npz", "path": str(folder / "mine.npz"), "features": "features"}


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("kind", ["csv", "parquet", "feather", "npy-labels", "npy-column", "npz"])
def test_each_format_stores_what_write_dataset_stores(kind, sparse, tmp_path):
    frame = _table()
    X = frame[["a", "b", "c", "d"]].to_numpy()
    y = np.where(frame["label"].to_numpy() == 1, 1.0, -1.0)
    params = _write(kind, tmp_path, frame)
    importer = params.pop("importer")
    imported = import_dataset(importer, {**params, "label_map": "0/1", "sparse": sparse}, tmp_path / "cache")["train"]
    written = write_dataset(tmp_path / "written", sp.csr_matrix(X) if sparse else X, y)
    assert imported.fingerprint == written.fingerprint
    assert imported.sparse is sparse and (imported.n_rows, imported.n_features) == (60, 4)
    got, want = imported.read(slice(None)), written.read(slice(None))
    dense = (lambda m: m.toarray()) if sparse else (lambda m: m)
    np.testing.assert_array_equal(dense(got[0]), X)
    np.testing.assert_array_equal(got[1], y)
    np.testing.assert_array_equal(dense(want[0]), dense(got[0]))


def test_labels_kept_as_numbers_or_mapped_by_the_positive_label(tmp_path):
    frame = _table(8)
    frame["kind"] = np.where(frame["label"] == 1, "spam", "ham")
    frame.to_csv(tmp_path / "mine.csv", index=False)
    path = str(tmp_path / "mine.csv")
    kept = import_dataset("csv", {"path": path, "label": "d", "features": ["a", "b"]}, tmp_path / "cache")["train"]
    np.testing.assert_array_equal(kept.labels(), frame["d"].to_numpy())
    assert kept.n_features == 2
    spam = import_dataset("csv", {"path": path, "label": "kind", "features": ["a", "b"], "positive": "spam"},
                          tmp_path / "cache")["train"]
    np.testing.assert_array_equal(spam.labels(), np.where(frame["label"] == 1, 1.0, -1.0))
    three = import_dataset("csv", {"path": path, "label": "c", "features": ["a"], "positive": 3}, tmp_path / "cache")
    np.testing.assert_array_equal(three["train"].labels(), np.where(frame["c"] == 3, 1.0, -1.0))


def test_a_changed_file_is_a_new_dataset_and_a_moved_one_the_same(tmp_path):
    frame = _table(10)
    frame.to_csv(tmp_path / "mine.csv", index=False)
    params = {"path": str(tmp_path / "mine.csv"), "label": "label", "label_map": "0/1"}
    first = import_dataset("csv", params, tmp_path / "cache")["train"]
    (tmp_path / "moved").mkdir()
    (tmp_path / "mine.csv").rename(tmp_path / "moved" / "mine.csv")
    moved = import_dataset("csv", {**params, "path": str(tmp_path / "moved" / "mine.csv")}, tmp_path / "cache")
    assert moved["train"].path == first.path
    frame.loc[3, "a"] += 1.0
    frame.to_csv(tmp_path / "moved" / "mine.csv", index=False)
    changed = import_dataset("csv", {**params, "path": str(tmp_path / "moved" / "mine.csv")}, tmp_path / "cache")
    assert changed["train"].path != first.path and changed["train"].fingerprint != first.fingerprint


PIPELINE = """
[pipeline]
name = "mine"
seed = 3

[datasets.mine]
{source}

[experiments.e]
dataset = "mine"
task = "binary"
split = {{ scheme = "holdout", count = 3 }}
checkpoints = [20, 48]
metrics = ["test_error"]
learners = [{{ learner = "perceptron" }}, {{ learner = "pa" }}]
"""


def _pipeline(tmp_path, source: str):
    path = tmp_path / "p.toml"
    path.write_text(textwrap.dedent(PIPELINE.format(source=source)))
    return path


def test_an_imported_csv_gives_the_cells_of_the_same_arrays_written(tmp_path):
    frame = _table()
    frame.to_csv(tmp_path / "mine.csv", index=False)
    X, y = frame[["a", "b", "c", "d"]].to_numpy(), np.where(frame["label"] == 1, 1.0, -1.0)
    write_dataset(tmp_path / "store", X, y)
    imported = _pipeline(tmp_path, 'importer = "csv"\nparams = { path = "mine.csv", label = "label", label_map = "0/1" }')
    ids = {}
    for name, source in (("imported", imported), ("written", None)):
        pipeline = load_pipeline(source or _pipeline(tmp_path, 'train = "store"'))
        groups = expand_groups(pipeline, open_datasets(pipeline, tmp_path / "cache"))
        ids[name] = [group.cell_id(i) for group in groups for i in range(group.n_splits)]
    assert ids["imported"] == ids["written"] and len(ids["written"]) == 6


@pytest.mark.parametrize("text, params, message", [
    ("a,b,label\n1,2,0\n1,abc,1\n", "", "CSV file {csv}, line 3, column 'b': 'abc' is not a number"),
    ("a,b,label\n1,2,0\n1,,1\n", "", "CSV file {csv}, line 3, column 'b': no value (an empty, NA or NaN cell)"),
    ("a,b,label\n1,2,0\n1,inf,1\n", "", "CSV file {csv}, line 3, column 'b': inf is not a finite number"),
    ("a,b,y\n1,2,0\n", "", "CSV file {csv}: no label column 'label' (its columns: 'a', 'b', 'y')"),
    ("", "", "CSV file {csv}: cannot read it (Empty CSV file)"),
    ("a,b,label\n", "", "CSV file {csv} holds no examples"),
    ("a,b,label\n1,2,0\n1,2,2\n", ', label_map = "0/1"', 'CSV file {csv}, line 3: label 2 is neither 0 nor 1'),
    ("a,b,label\n1,2,0\n1,2,1\n", "", "dataset 'mine' (train part): row 0 (from 0) has label 0, a binary task needs "
     'labels -1/+1; map them with the importer\'s label_map = "0/1" or positive = <label>'),
    ("a,b,label\n1,2,0\n1,2,1\n3,4,2\n", "", "dataset 'mine' (train part): its labels are 0, 1, 2, a binary task "
     "needs two, -1/+1; map them"),
    ("a,b,label\n1,2,0\n1,2,1\n", ', positive = "1"', "datasets.mine.params: importer 'csv', parameter 'positive': "
     "'1' is not a label of CSV file {csv} (its labels are numbers: 0, 1)"),
    ("a,b,label\n1,2,0\n1,2,1\n", ", labls = 1", "datasets.mine.params: importer 'csv': unknown parameter 'labls'"),
])
def test_bad_files_and_labels_are_one_line_and_write_nothing(text, params, message, tmp_path, capsys):
    (tmp_path / "mine.csv").write_text(text)
    pipeline = _pipeline(tmp_path, f'importer = "csv"\nparams = {{ path = "mine.csv", label = "label"{params} }}')
    cache, out = tmp_path / "cache", tmp_path / "out"
    assert main(["plan", str(pipeline), "--out", str(out), "--data-cache", str(cache)]) == 2
    err = capsys.readouterr().err
    assert message.format(csv=tmp_path / "mine.csv") in err and err.count("\n") == 1, err
    assert not cache.exists() and not out.exists()


def test_a_file_named_as_a_store_says_which_importer_to_use(tmp_path, capsys):
    _table(5).to_parquet(tmp_path / "mine.parquet")
    pipeline = _pipeline(tmp_path, 'train = "mine.parquet"')
    assert main(["plan", str(pipeline), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        f"dolb: error: {pipeline}: datasets.mine.train: 'mine.parquet' is a file, not a dataset store: give "
        'importer = "parquet" and params = { path = "mine.parquet", label = ... } instead (see the pipeline '
        "reference), or write a store with dolb.data.write_dataset\n")


def test_run_refuses_labels_a_binary_task_cannot_use_before_any_cell(tmp_path, capsys):
    write_dataset(tmp_path / "store", np.eye(60), np.arange(60) % 2)
    pipeline = _pipeline(tmp_path, 'train = "store"')
    assert main(["run", str(pipeline), "--out", str(tmp_path / "out"), "--workers", "1"]) == 2
    assert capsys.readouterr().err == (
        f"dolb: error: {pipeline}: experiments.e: dataset 'mine' (train part, {tmp_path / 'store'}): row 0 (from 0) "
        "has label 0, a binary task needs labels -1/+1; map them with the importer's label_map = \"0/1\" or "
        "positive = <label> (that label +1, the rest -1)\n")
    assert not (tmp_path / "out").exists()


def test_run_refuses_an_import_of_such_labels_on_the_cluster_before_writing_it(tmp_path, capsys):
    _table().to_csv(tmp_path / "mine.csv", index=False)
    pipeline = _pipeline(tmp_path, 'importer = "csv"\nparams = { path = "mine.csv", label = "label" }')
    cache, out = tmp_path / "cache", tmp_path / "out"
    assert main(["run", str(pipeline), "--out", str(out), "--workers", "1", "--data-cache", str(cache)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dolb: error: dataset 'mine' (train part): row 0 (from 0) has label 0, a binary task "
                          'needs labels -1/+1; map them with the importer\'s label_map = "0/1"') and err.count("\n") == 1
    assert not cache.exists() and not out.exists()


def test_arrays_with_labels_a_binary_task_cannot_use_are_refused_saying_how_to_give_them(tmp_path):
    pipeline = {
        "pipeline": {"name": "own", "seed": 3},
        "datasets": {"arrays": {"X": np.eye(8), "y": np.arange(8.0) % 2}},
        "experiments": {"e": {"dataset": "arrays", "task": "binary", "split": {"scheme": "holdout", "count": 1},
                              "checkpoints": [4], "metrics": ["test_error"], "learners": [{"learner": "perceptron"}]}},
    }
    with pytest.raises(DataError, match=r"\(train part, .*\): row 0 \(from 0\) has label 0, a binary task needs "
                       r"labels -1/\+1; give y as -1/\+1, e.g. np.where\(y == 1, 1.0, -1.0\)$"):
        dolb.run(pipeline, tmp_path / "out", workers=1, data_cache=tmp_path / "cache")
    assert not (tmp_path / "out").exists()


def test_run_of_a_csv_and_of_arrays_on_a_local_cluster(tmp_path):
    """One run through the Python API (what ``dolb run`` runs) of a CSV file with 0/1
    labels and a label map, and of arrays given in the pipeline mapping."""
    frame = _table()
    frame.to_csv(tmp_path / "mine.csv", index=False)
    X, y = sp.csr_matrix(frame[["a", "b", "c", "d"]].to_numpy()), np.where(frame["label"] == 1, 1.0, -1.0)
    experiment = {"task": "binary", "split": {"scheme": "holdout", "count": 2}, "checkpoints": [48],
                  "metrics": ["test_error"], "learners": [{"learner": "perceptron"}]}
    pipeline = {
        "pipeline": {"name": "own", "seed": 3},
        "datasets": {"arrays": {"X": X, "y": y},
                     "csv": {"importer": "csv", "params": {"path": str(tmp_path / "mine.csv"), "label": "label",
                                                            "label_map": "0/1"}}},
        "experiments": {"arrays": {"dataset": "arrays", **experiment}, "csv": {"dataset": "csv", **experiment}},
    }
    cache = tmp_path / "cache"
    summary = dolb.run(pipeline, tmp_path / "out", workers=1, data_cache=cache)
    values = stored_values(tmp_path / "out")
    assert summary.n_failed == 0 and len(values) == 4 and values["value"].between(0.0, 1.0).all()
    assert values.groupby("dataset").size().to_dict() == {"arrays": 2, "csv": 2}
    stores = {entry.name.split("-")[0]: entry / "train" for entry in cache.iterdir()}
    assert sorted(stores) == ["arrays", "csv"]
    assert f'train = "{stores["arrays"]}"' in (tmp_path / "out" / "pipeline.toml").read_text()
    written = write_dataset(tmp_path / "written", X, y).fingerprint
    assert open_dataset(stores["arrays"]).fingerprint == written
    dense = write_dataset(tmp_path / "dense", frame[["a", "b", "c", "d"]].to_numpy(), y).fingerprint
    assert open_dataset(stores["csv"]).fingerprint == dense


@pytest.mark.parametrize("value, message", [
    (np.arange(3), 'give a list (.tolist()); a dataset\'s arrays go in as datasets.NAME = {"X": X, "y": y}'),
    (pd.DataFrame({"a": [1]}), "a dataset's arrays go in as datasets.NAME"),
    (np.float32(0.5), "give int(...) or float(...)"),
    (object(), "give text, a number, a truth value, a date, a list or a mapping"),
])
def test_values_toml_cannot_hold_say_what_to_give(value, message, tmp_path):
    pipeline = {"pipeline": {"name": "x", "seed": 1, "description": value}}
    with pytest.raises(ConfigError, match="pipeline mapping, at pipeline.description: a ") as info:
        dolb.run(pipeline, tmp_path / "out")
    assert message in str(info.value)


def test_arrays_given_wrong_are_one_line(tmp_path):
    with pytest.raises(ConfigError, match="at datasets.mine: 'X' without 'y'"):
        dolb.run({"datasets": {"mine": {"X": np.eye(2)}}}, tmp_path / "out", data_cache=tmp_path / "cache")
    with pytest.raises(ConfigError, match="at datasets.mine.train: a dataset given as arrays takes only X, y"):
        dolb.run({"datasets": {"mine": {"X": np.eye(2), "y": [1, -1], "train": "s"}}}, tmp_path / "out")
    with pytest.raises(DataError, match="at datasets.mine: dataset .*: X row 1 holds NaN or Inf"):
        dolb.run({"datasets": {"mine": {"X": np.array([[1.0], [np.nan]]), "y": [1, -1]}}}, tmp_path / "out",
                 data_cache=tmp_path / "cache")
    assert not (tmp_path / "out").exists() and not any((tmp_path / "cache").iterdir())
