"""The faces importer: grey images in an .npy file as a face / non-face problem, checked
against the file read with NumPy; a small pipeline on the real images, end to end."""

import hashlib
import shutil
import textwrap

import numpy as np
import pytest

from dolb.cli import main
from dolb.data import IMPORTERS, import_dataset, open_dataset
from dolb.data.sources.faces import read_faces
from dolb.errors import ConfigError
from dolb.results.tables import read_results
from tests.conftest import SHARED_DATA, requires_shared_data

LFW = SHARED_DATA / "face" / "lfw_subset.npy"


def read_all(dataset):
    """(X, y) of a whole store."""
    return dataset.read(slice(None))


@pytest.mark.realdata
@requires_shared_data("face", "lfw_subset.npy")
def test_lfw_subset_is_100_faces_then_100_non_faces(tmp_path):
    sets = import_dataset("faces", {"path": str(LFW)}, tmp_path)
    assert list(sets) == ["train"]
    train = sets["train"]
    assert (train.n_rows, train.n_features, train.sparse) == (200, 625, False)
    X, y = read_all(train)
    images = np.load(LFW, allow_pickle=False)
    assert images.shape == (200, 25, 25) and images.dtype == np.float64
    assert X.dtype == np.float64
    np.testing.assert_array_equal(X, images.reshape(200, 625))  # as stored: not rescaled
    assert y.tolist() == [1.0] * 100 + [-1.0] * 100
    assert X.min() == 0.0 and X.max() == 1.0
    assert train.provenance["importer"] == "faces" and train.provenance["params"] == {"n_positive": 100}
    assert train.provenance["sources"] == [
        {"file": LFW.name, "size": LFW.stat().st_size, "sha256": hashlib.sha256(LFW.read_bytes()).hexdigest()}
    ]


@pytest.mark.realdata
@requires_shared_data("face", "lfw_subset.npy")
def test_n_positive_moves_the_class_boundary_and_the_file_may_move(tmp_path):
    data = tmp_path / "data"
    default = import_dataset("faces", {"path": str(LFW)}, data)["train"]
    more = import_dataset("faces", {"path": str(LFW), "n_positive": 150}, data)["train"]
    assert more.labels().tolist() == [1.0] * 150 + [-1.0] * 50
    np.testing.assert_array_equal(read_all(more)[0], read_all(default)[0])
    copy = tmp_path / "elsewhere" / LFW.name
    copy.parent.mkdir()
    shutil.copy(LFW, copy)
    moved = import_dataset("faces", {"path": str(copy)}, data)["train"]
    assert moved.fingerprint == default.fingerprint
    assert sorted(p.name.split("-")[0] for p in data.iterdir()) == ["faces", "faces"]  # the same file elsewhere is reused


def test_images_are_flattened_row_by_row(tmp_path):
    images = np.arange(3 * 2 * 4, dtype=np.float64).reshape(3, 2, 4) / 7
    np.save(tmp_path / "images.npy", images)
    (train,) = import_dataset("faces", {"path": str(tmp_path / "images.npy"), "n_positive": 1}, tmp_path / "data").values()
    X, y = read_all(train)
    np.testing.assert_array_equal(X, images.reshape(3, 8))
    np.testing.assert_array_equal(X[1], np.concatenate([images[1, 0], images[1, 1]]))
    assert y.tolist() == [1.0, -1.0, -1.0]


def test_rows_and_whole_numbers_are_kept_as_they_are(tmp_path):
    rows = np.array([[0, 255, 7], [3, 0, 1], [9, 9, 9], [1, 2, 3]], dtype=np.uint8)
    np.save(tmp_path / "rows.npy", rows)
    (train,) = import_dataset("faces", {"path": str(tmp_path / "rows.npy"), "n_positive": 3}, tmp_path / "data").values()
    X, y = read_all(train)
    assert X.dtype == np.float64
    np.testing.assert_array_equal(X, rows.astype(np.float64))  # 0..255 stays 0..255
    assert y.tolist() == [1.0, 1.0, 1.0, -1.0]


def test_read_faces_refuses_a_class_left_empty(tmp_path):
    np.save(tmp_path / "two.npy", np.zeros((2, 4)))
    for n_positive, side in ((0, "face"), (2, "non-face")):
        message = f"importer 'faces', parameter 'n_positive': {n_positive} leaves no row for the {side} class"
        with pytest.raises(ConfigError, match=message):
            read_faces(tmp_path / "two.npy", n_positive)


def test_the_importer_declares_its_parameters():
    faces = IMPORTERS["faces"]
    assert list(faces.params) == ["path", "n_positive"] and faces.parts == ("train",)
    assert faces.params["n_positive"].default == 100
    assert "Labeled Faces in the Wild" in faces.reference


STUDY = """\
[pipeline]
name = "faces"
seed = 2008

[datasets.lfw]
importer = "faces"
params = {{ path = "{path}" }}

[experiments.face]
dataset = "lfw"
task = "binary"
split = {{ scheme = "holdout", count = 2, test_fraction = 0.25, order = "random" }}
checkpoints = [50, 150]
metrics = ["test_error", "online_loss"]
label_rate = 0.5
labelled_first = 2
learners = [
  {{ learner = "perceptron" }},
  {{ learner = "online_mr", params = {{ label_rate = 0.5 }} }},
]
"""


@pytest.mark.e2e
@pytest.mark.realdata
@requires_shared_data("face", "lfw_subset.npy")
def test_a_face_study_runs_end_to_end(tmp_path, monkeypatch, capsys):
    """Online manifold regularisation against the Perceptron on faces / non-faces with
    half the labels: the import lands in the data cache as a verified Zarr store and the
    holdout split leaves 150 training images (and 50 test ones)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("DOLB_DATA_CACHE", str(cache))
    pipeline = tmp_path / "faces.toml"
    out = tmp_path / "out"
    pipeline.write_text(textwrap.dedent(STUDY.format(path=LFW)).replace("[50, 150]", "[50, 151]"))
    assert main(["plan", str(pipeline), "--out", str(out)]) == 2
    assert "training size 151 exceeds the 150 training examples of a split" in capsys.readouterr().err
    pipeline.write_text(textwrap.dedent(STUDY.format(path=LFW)))
    assert main(["-q", "run", str(pipeline), "--out", str(out), "--workers", "1", "--no-progress"]) == 0

    (run,) = cache.iterdir()
    assert run.name.startswith("faces-") and [p.name for p in run.iterdir()] == ["train"]
    assert main(["verify", str(run / "train")]) == 0
    X, y = read_all(open_dataset(run / "train"))
    np.testing.assert_array_equal(X, np.load(LFW, allow_pickle=False).reshape(200, 625))
    assert y.tolist() == [1.0] * 100 + [-1.0] * 100

    frame = read_results(out)
    error = frame[frame.metric == "test_error"]
    assert sorted(error.n_train.unique()) == [50, 150]
    assert len(error) == 2 * 2 * 2 and error.value.between(0, 1).all()
    last = error[error.n_train == 150].groupby("learner")["value"].mean()
    assert set(last.index) == {"perceptron", "online_mr"}
    assert last["online_mr"] < 0.3  # well below chance on this problem
